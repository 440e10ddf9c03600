// A 3x3 convolution layer (NHWC, batch 2) with bias and ReLU, as linalg from a frontend.
func.func @conv(%input: tensor<2x34x34x16xf32>, %filter: tensor<3x3x16x32xf32>, %bias: tensor<32xf32>) -> tensor<2x32x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x32x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%input, %filter : tensor<2x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%fill : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bias : tensor<2x32x32x32xf32>, tensor<32xf32>) outs(%empty : tensor<2x32x32x32xf32>) {
  ^bb0(%c: f32, %b: f32, %o: f32):
    %s = arith.addf %c, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x32x32x32xf32>
  return %out : tensor<2x32x32x32xf32>
}
