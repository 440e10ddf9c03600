// A 2-layer MLP as torch-mlir lowers nn.Linear + ReLU to linalg: 16x256 -> 512 -> 128.
#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<16x256xf32>, %w1: tensor<256x512xf32>, %b1: tensor<512xf32>,
               %w2: tensor<512x128xf32>, %b2: tensor<128xf32>) -> tensor<16x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x512xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<16x256xf32>, tensor<256x512xf32>) outs(%f1 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %h = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<16x512xf32>, tensor<512xf32>) outs(%e1 : tensor<16x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x512xf32>
  %e2 = tensor.empty() : tensor<16x128xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x128xf32>) -> tensor<16x128xf32>
  %m2 = linalg.matmul ins(%h, %w2 : tensor<16x512xf32>, tensor<512x128xf32>) outs(%f2 : tensor<16x128xf32>) -> tensor<16x128xf32>
  %y = linalg.generic {indexing_maps = [#map_id, #map_bias, #map_id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %b2 : tensor<16x128xf32>, tensor<128xf32>) outs(%e2 : tensor<16x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}
