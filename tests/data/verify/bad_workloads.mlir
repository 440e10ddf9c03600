// expected-error: 14:5: error: 'autotune.group' op workloads must be a list of lists of non-negative integers
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module {
  hal.executable.source private @ptx <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "k.ptx"}>]}>}> {
    hal.executable.export public @add_64 ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @add_128 ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
    autotune.group @add variants([@add_64, @add_128]) {workloads = [[64], [-1]]}
  }
  util.func public @main(%a: tensor<64xf32>, %k: i32) -> tensor<64xf32> {
    %c64 = arith.constant 64 : index
    %r = flow.dispatch @ptx::@add[%c64](%a, %k) : (tensor<64xf32>, i32) -> tensor<64xf32>
    util.return %r : tensor<64xf32>
  }
}
