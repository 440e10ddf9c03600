// hal.executable.export with condition region, fallback, count region, property dict and trailing attributes (iree-opt print order).
#layout = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  hal.executable.source private @exe <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "kernels.ptx"}>]}>}> {
    // Fast path: only taken when the workload is a multiple of 128.
    hal.executable.export public @matmul_fast ordinal(0) layout(#layout) condition(%device: !hal.device, %w: index) -> i1 {
      %c128 = arith.constant 128 : index
      %c0 = arith.constant 0 : index
      %rem = arith.remui %w, %c128 : index
      %ok = arith.cmpi eq, %rem, %c0 : index
      hal.return %ok : i1
    } fallback(@matmul_slow) count(%device: !hal.device, %w: index) -> (index, index, index) {
      %c128 = arith.constant 128 : index
      %x = arith.divui %w, %c128 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index], workgroup_local_memory = 16384 : index, subgroup_size = 32 : index}> attributes {autotune.variant = "fast", autotune.tile = 128 : i64}
    // Generic path.
    hal.executable.export public @matmul_slow ordinal(1) layout(#layout) count(%device: !hal.device, %w: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %x = arith.ceildivui %w, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index], subgroup_size = 32 : index}> attributes {autotune.variant = "slow"}
    hal.executable.export public @matmul_cond_only ordinal(2) layout(#layout) condition(%device: !hal.device, %w: index) -> i1 {
      %true = arith.constant true
      hal.return %true : i1
    } fallback(@matmul_slow) <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  }
}
