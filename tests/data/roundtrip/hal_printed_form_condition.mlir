// iree-opt printed form: <objects = <{...}>> shorthand, generated aliases, <workgroup_size = ..., subgroup_size = 32, workgroup_local_memory = 16384> property form, condition/fallback/count.
#executable_target_cuda_nvptx_fb = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#pipeline_layout = #hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer>]>
#device_target_cuda = #hal.device.target<"cuda", [#executable_target_cuda_nvptx_fb]> : !hal.device
module attributes {hal.device.targets = [#device_target_cuda]} {
  hal.executable.source private @exe <objects = <{#executable_target_cuda_nvptx_fb = [#hal.executable.object<{path = "kernels.ptx"}>]}>> {
    hal.executable.export public @matmul_fast ordinal(0) layout(#pipeline_layout) condition(%arg0: !hal.device, %arg1: index) -> i1 {
      %c128 = arith.constant 128 : index
      %c0 = arith.constant 0 : index
      %0 = arith.remui %arg1, %c128 : index
      %1 = arith.cmpi eq, %0, %c0 : index
      hal.return %1 : i1
    } fallback(@matmul_slow) count(%arg0: !hal.device, %arg1: index) -> (index, index, index) {
      %c128 = arith.constant 128 : index
      %0 = arith.divui %arg1, %c128 : index
      %c1 = arith.constant 1 : index
      hal.return %0, %c1, %c1 : index, index, index
    } <workgroup_size = [64 : index, 1 : index, 1 : index], subgroup_size = 32, workgroup_local_memory = 16384> attributes {autotune.tile = 128 : i64, autotune.variant = "fast"}
    hal.executable.export public @matmul_slow ordinal(1) layout(#pipeline_layout) count(%arg0: !hal.device, %arg1: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %0 = arith.ceildivui %arg1, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %0, %c1, %c1 : index, index, index
    } <workgroup_size = [64 : index, 1 : index, 1 : index], subgroup_size = 32> attributes {autotune.variant = "slow"}
    hal.executable.export public @matmul_cond_only ordinal(2) layout(#pipeline_layout) condition(%arg0: !hal.device, %arg1: index) -> i1 {
      %true = arith.constant true
      hal.return %true : i1
    } fallback(@matmul_slow) <workgroup_size = [128 : index, 1 : index, 1 : index]>
  }
}

