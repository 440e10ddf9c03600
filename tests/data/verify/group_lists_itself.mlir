// expected-error: 6:3: error: 'autotune.group' op variant @f is the group itself
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @f])
}
