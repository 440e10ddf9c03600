// expected-error: 4:10: 'util.call' op undefined/incompatible callee: missing
module {
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
