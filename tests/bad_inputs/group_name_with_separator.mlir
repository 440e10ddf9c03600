// expected-error: 10:5: 'autotune.group' op group name "lib::f" must not contain "::"
module {
    util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
      util.return %x : tensor<4xf32>
    }
    util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.optimization_barrier %x : tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
    autotune.group @"lib::f" variants([@f1, @f2])
    util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.call @"lib::f"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
}
