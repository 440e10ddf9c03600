// Two tile-size variants of a 64x64 matmul whose count regions are semi-affine maps
// (the Triton grid `cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)`), each matching its tile size.
module {
  flow.executable private @mm {
    flow.executable.export public @mm_a workgroups(%m: index, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %t = affine.apply affine_map<()[s0, s1] -> ((s0 ceildiv 32) * (s1 ceildiv 32))>()[%m, %n]
      flow.return %t, %c1, %c1 : index, index, index
    }
    flow.executable.export public @mm_b workgroups(%m: index, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %t = affine.apply affine_map<()[s0, s1] -> ((s0 ceildiv 16) * (s1 ceildiv 16))>()[%m, %n]
      flow.return %t, %c1, %c1 : index, index, index
    }
    autotune.group @mm variants([@mm_a, @mm_b])
    builtin.module {
      func.func @mm_a(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>>) {
        %zero = arith.constant 0.0 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32>
        %e = tensor.empty() : tensor<64x64xf32>
        %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
        %r = linalg.matmul {compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [32, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 4]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : tensor<64x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>>
        return
      }
      func.func @mm_b(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>>) {
        %zero = arith.constant 0.0 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32>
        %e = tensor.empty() : tensor<64x64xf32>
        %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
        %r = linalg.matmul {compilation_info = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16, 0], vector_common_parallel = [4, 4, 0], vector_reduction = [0, 0, 4]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : tensor<64x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>>
        return
      }
    }
  }
  util.func public @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %c64 = arith.constant 64 : index
    %r = flow.dispatch @mm::@mm[%c64, %c64](%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    util.return %r : tensor<64x64xf32>
  }
}
