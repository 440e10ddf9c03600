// expected-error: 12:23: use of undeclared SSA value %y
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.optimization_barrier %x : tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f2])
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%y) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
