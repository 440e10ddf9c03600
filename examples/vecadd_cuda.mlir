// Vector add with three hand-written PTX kernels (vecadd.ptx, beside this file) chosen
// at run time by an autotune group. Each export's workgroup_size and workgroup_local_memory
// match its kernel's .reqntid and shared-memory staging (2 * block * 4 bytes).
// `iree-autotune compile vecadd_cuda.mlir --target cuda --arch sm_80 -o vecadd.vmfb`
module {
  hal.executable.source private @exe <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "vecadd.ptx"}>]}>}> {
    // 64 threads per block, 512 bytes of dynamic shared memory (a and b staged).
    hal.executable.export public @add_64 ordinal(0) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %c1 = arith.constant 1 : index
      %x = arith.ceildivui %n, %c64 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index], workgroup_local_memory = 512 : index}>
    // 128 threads per block, 1024 bytes of dynamic shared memory (a and b staged).
    hal.executable.export public @add_128 ordinal(1) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c128 = arith.constant 128 : index
      %c1 = arith.constant 1 : index
      %x = arith.ceildivui %n, %c128 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index], workgroup_local_memory = 1024 : index}>
    // 256 threads per block, 2048 bytes of dynamic shared memory (a and b staged).
    hal.executable.export public @add_256 ordinal(2) layout(#hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c256 = arith.constant 256 : index
      %c1 = arith.constant 1 : index
      %x = arith.ceildivui %n, %c256 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 2048 : index}>
    // Sample workloads let the explicit and init policies tune on synthetic inputs.
    autotune.group @add variants([@add_64, @add_128, @add_256]) {workloads = [[4096], [1000]]}
  }
  // Any size: n is the workload and, cast to i32, the kernels' push constant.
  util.func public @vecadd(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?xf32>
    %n32 = arith.index_cast %n : index to i32
    %r = flow.dispatch @exe::@add[%n](%a, %b, %n32) : (tensor<?xf32>{%n}, tensor<?xf32>{%n}, i32) -> tensor<?xf32>{%n}
    util.return %r : tensor<?xf32>
  }
  // A static size: its workload is a constant key.
  util.func public @vecadd_4096(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
    %n = arith.constant 4096 : index
    %n32 = arith.constant 4096 : i32
    %r = flow.dispatch @exe::@add[%n](%a, %b, %n32) : (tensor<4096xf32>, tensor<4096xf32>, i32) -> tensor<4096xf32>
    util.return %r : tensor<4096xf32>
  }
}
