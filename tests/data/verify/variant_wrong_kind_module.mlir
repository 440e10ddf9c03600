// expected-error: 7:3: error: 'autotune.group' op variant @scale_table is a 'util.global', expected 'util.func' or 'func.func'
module {
  util.global private @scale_table : tensor<4xf32>
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  autotune.group @f variants([@f1, @scale_table])
}
