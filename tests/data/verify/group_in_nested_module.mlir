// expected-error: 11:5: error: 'autotune.group' op cannot be inside a nested module @lib: iree-compile builds the top-level module's code only; place the group, its variants and their uses there
module {
  builtin.module @lib {
    util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
      util.return %x : tensor<4xf32>
    }
    util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.optimization_barrier %x : tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
    autotune.group @f variants([@f1, @f2])
    util.func public @run(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
      util.return %0 : tensor<4xf32>
    }
  }
}
