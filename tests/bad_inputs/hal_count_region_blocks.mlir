// expected-error: 4:5: 'hal.executable.export' op expected a single region block for the workgroup count
module {
  hal.executable.source private @exe {
    hal.executable.export public @k layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      cf.br ^end
    ^end:
      hal.return %n, %c1, %c1 : index, index, index
    }
  }
}
