// expected-error: 19:5: error: duplicate symbol @add; first defined at {FILE}:7:5
// The container's symbol table rejects the duplicate before the group's own name check runs.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module {
  hal.executable.source private @ptx <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "k.ptx"}>]}>}> {
    hal.executable.export public @add ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
    hal.executable.export public @add_64 ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @add_128 ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
    autotune.group @add variants([@add_64, @add_128])
  }
}
