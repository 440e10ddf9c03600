// expected-error: 11:10: 'util.call' op calls group @f, which its own variants reach (@f -> @f2 -> @helper -> @f)
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  util.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f2])
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
