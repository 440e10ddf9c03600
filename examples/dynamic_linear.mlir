// A linear layer + ReLU whose batch size is only known at run time (tensor<?x256xf32>).
func.func @dynamic(%x: tensor<?x256xf32>, %w: tensor<256x256xf32>) -> tensor<?x256xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x256xf32>
  %empty = tensor.empty(%n) : tensor<?x256xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x256xf32>) -> tensor<?x256xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x256xf32>, tensor<256x256xf32>) outs(%fill : tensor<?x256xf32>) -> tensor<?x256xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x256xf32>) outs(%empty : tensor<?x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>
  return %out : tensor<?x256xf32>
}
