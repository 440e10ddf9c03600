// Two linear layers with ReLU over a batch of dynamic size, as torch-mlir emits linalg.
func.func @dynamic(%x: tensor<?x512xf32>, %w1: tensor<512x1024xf32>, %w2: tensor<1024x512xf32>) -> tensor<?x512xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x512xf32>
  %e1 = tensor.empty(%n) : tensor<?x1024xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<?x512xf32>, tensor<512x1024xf32>) outs(%f1 : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m1 : tensor<?x1024xf32>) outs(%e1 : tensor<?x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x1024xf32>
  %e2 = tensor.empty(%n) : tensor<?x512xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x512xf32>) -> tensor<?x512xf32>
  %m2 = linalg.matmul ins(%r1, %w2 : tensor<?x1024xf32>, tensor<1024x512xf32>) outs(%f2 : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m2 : tensor<?x512xf32>) outs(%e2 : tensor<?x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x512xf32>
  return %r2 : tensor<?x512xf32>
}
