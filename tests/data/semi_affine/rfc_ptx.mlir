// The RFC's example (iree-org/iree#13848): PTX kernels in a hal.executable.source whose
// count regions compute the grid with a semi-affine map, as Triton's grids are written.
// The kernels are tests/data/cuda/vecadd.ptx's; the grid of each covers the 64x64 = 4096
// elements.
module {
  hal.executable.source private @exe <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "../cuda/vecadd.ptx"}>]}>}> {
    hal.executable.export public @add_64 ordinal(0) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %m: index, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %x = affine.apply affine_map<()[s0, s1] -> ((s0 ceildiv 8) * (s1 ceildiv 8))>()[%m, %n]
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index], workgroup_local_memory = 512 : index}>
    hal.executable.export public @add_128 ordinal(1) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %m: index, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %x = affine.apply affine_map<()[s0, s1] -> ((s0 ceildiv 8) * (s1 ceildiv 16))>()[%m, %n]
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 1024 : index}>
    autotune.group @add variants([@add_64, @add_128]) {workloads = [[64, 64]]}
  }
  util.func public @vecadd(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
    %m = arith.constant 64 : index
    %n = arith.constant 64 : index
    %n32 = arith.constant 4096 : i32
    %r = flow.dispatch @exe::@add[%m, %n](%a, %b, %n32) : (tensor<4096xf32>, tensor<4096xf32>, i32) -> tensor<4096xf32>
    util.return %r : tensor<4096xf32>
  }
}
