// expected-error: 20:10: 'flow.dispatch' op cannot create synthetic inputs for tuning group @add: a dynamic dimension is neither a constant nor a workload value
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
    autotune.group @add variants([@add_64, @add_128]) {policy = "explicit", workloads = [[64]]}
  }
  util.func public @main(%a: tensor<?xf32>, %k: i32) -> tensor<?xf32> {
    %c64 = arith.constant 64 : index
    %c0 = arith.constant 0 : index
    %d = tensor.dim %a, %c0 : tensor<?xf32>
    %r = flow.dispatch @ptx::@add[%c64](%a, %k) : (tensor<?xf32>{%d}, i32) -> tensor<?xf32>{%d}
    util.return %r : tensor<?xf32>
  }
}
