// expected-error: 10:3: duplicate symbol @f1; first defined at {FILE}:3:3
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.optimization_barrier %x : tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f1 variants([@f1, @f2])
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f1(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
