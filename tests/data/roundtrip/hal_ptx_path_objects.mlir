// hal.executable.source with CUDA path objects (generic property form), exports with count regions and ReadOnly/Indirect bindings.
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb">]> : !hal.device]} {
  hal.executable.source private @exe <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "kernels.ptx"}>]}>}> {
    hal.executable.export public @simple_mul ordinal(0) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %workload: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %x = arith.ceildivui %workload, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @simple_mul_inplace ordinal(1) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %workload: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %x = arith.ceildivui %workload, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @gather ordinal(2) layout(#hal.pipeline.layout<constants = 2, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %rows: index, %cols: index) -> (index, index, index) {
      %c32 = arith.constant 32 : index
      %x = arith.ceildivui %cols, %c32 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %rows, %c1 : index, index, index
    } <{workgroup_size = [32 : index, 1 : index, 1 : index], subgroup_size = 32 : index}>
  }
}
