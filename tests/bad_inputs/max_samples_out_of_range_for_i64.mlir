// expected-error: 10:45: 'autotune.group' op group attribute 'max_samples' is 9223372036854775808, out of range for i64 (-9223372036854775808 to 9223372036854775807)
module {
    util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
      util.return %x : tensor<4xf32>
    }
    util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.optimization_barrier %x : tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
    autotune.group @f variants([@f1, @f2]) {max_samples = 9223372036854775808}
    util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
}
