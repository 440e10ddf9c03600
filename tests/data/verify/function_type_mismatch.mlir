// expected-error: 10:3: error: 'autotune.group' op variant @f2 of autotune.group @f has type (tensor<4xf32>) -> tensor<4xf16>, but @f1 has type (tensor<4xf32>) -> tensor<4xf32>; all variants must have the same function type
module {
  util.func private @f1(%x: tensor<4xf32>) -> tensor<4xf32> {
    util.return %x : tensor<4xf32>
  }
  util.func private @f2(%x: tensor<4xf32>) -> tensor<4xf16> {
    %0 = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
    util.return %0 : tensor<4xf16>
  }
  autotune.group @f variants([@f1, @f2])
  util.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = util.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
