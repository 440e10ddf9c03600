// hal.executable.source with embedded PTX bytes (#hal.executable.object<{data = dense<...> : vector<Nxi8>}>) plus a second target using a path object.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#rocm = #hal.executable.target<"rocm", "rocm-hsaco-fb">
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  hal.executable.source private @embedded <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{data = dense<[47, 47, 10, 47, 47, 32, 71, 101, 110, 101, 114, 97, 116, 101, 100, 32, 98, 121, 32, 78, 86, 73, 68, 73, 65, 32, 78, 86, 86, 77, 32, 67, 111, 109, 112, 105, 108, 101, 114, 10, 46, 118, 101, 114, 115, 105, 111, 110, 32, 55, 46, 48, 10, 46, 116, 97, 114, 103, 101, 116, 32, 115, 109, 95, 56, 48, 10, 46, 97, 100, 100, 114, 101, 115, 115, 95, 115, 105, 122, 101, 32, 54, 52, 10, 10, 46, 118, 105, 115, 105, 98, 108, 101, 32, 46, 101, 110, 116, 114, 121, 32, 97, 100, 100, 95, 111, 110, 101, 40, 10, 9, 46, 112, 97, 114, 97, 109, 32, 46, 117, 54, 52, 32, 97, 44, 10, 9, 46, 112, 97, 114, 97, 109, 32, 46, 117, 54, 52, 32, 98, 10, 41, 10, 123, 10, 9, 114, 101, 116, 59, 10, 125, 10]> : vector<153xi8>}>]}>}> {
    hal.executable.export public @add_one ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c256 = arith.constant 256 : index
      %x = arith.ceildivui %n, %c256 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [256 : index, 1 : index, 1 : index]}>
  }
  hal.executable.source private @multi_target <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{data = dense<[0, 1, -1, 127, -128, 42, -7, 16]> : vector<8xi8>}>, #hal.executable.object<{path = "extra.ptx"}>], #rocm = [#hal.executable.object<{path = "kernels.hsaco"}>]}>}> {
    hal.executable.export public @k0 ordinal(0) layout(#layout)
    hal.executable.export public @k1 ordinal(1) layout(#layout) <{workgroup_size = [32 : index, 8 : index, 1 : index]}> attributes {note = "no count region"}
  }
}
