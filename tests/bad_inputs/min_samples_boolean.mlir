// expected-error: 10:45: 'autotune.group' op group attribute 'min_samples' expects an integer, not a boolean (true)
module {
    util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
      util.return %x : tensor<4xf32>
    }
    util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.optimization_barrier %x : tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
    autotune.group @f variants([@f1, @f2]) {min_samples = true}
    util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
}
