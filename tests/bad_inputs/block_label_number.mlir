// expected-error: 4:29: reference to an undefined block
module {
  util.func public @pick(%flag: i1, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    cf.cond_br %flag, ^bb1, ^bb2
  ^bb1:
    util.return %a : tensor<4xf32>
  ^1:
    util.return %b : tensor<4xf32>
  }
}
