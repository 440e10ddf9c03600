// expected-error: 8:10: 'util.call' op calls group @f, which its own variants reach (@f -> @f1 -> @g -> @g1 -> @f)
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  util.func private @g1(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f variants([@f1])
  autotune.group @g variants([@g1])
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
