// expected-error: 15:10: 'flow.dispatch' op entry point @exe::@missing not found
module {
  hal.executable.source private @exe {
    hal.executable.export public @k layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    }
    hal.executable.export public @k2 layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>, #hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    }
  }
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c4 = arith.constant 4 : index
    %0 = flow.dispatch @exe::@missing[%c4](%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
