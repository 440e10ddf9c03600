// A matmul with three tile-size variants for AMD GPUs, chosen at run time by an autotune group.
// `iree-autotune compile matmul_rocm.mlir --target rocm --arch gfx942 -o matmul.vmfb`
#mm_16x16 = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [16, 16, 0], reduction = [0, 0, 4], thread = [1, 4, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [64, 1, 1] subgroup_size = 64>>
#mm_32x32 = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [32, 32, 0], reduction = [0, 0, 8], thread = [2, 4, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 1, 1] subgroup_size = 64>>
#mm_64x64 = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], reduction = [0, 0, 8], thread = [4, 4, 0]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 64>>
module {
  flow.executable private @matmul_kernels {
    flow.executable.export public @mm_16x16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_32x32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_64x64 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @matmul variants([@mm_16x16, @mm_32x32, @mm_64x64])
    builtin.module {
      func.func @mm_16x16(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_16x16} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
      func.func @mm_32x32(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_32x32} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
      func.func @mm_64x64(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_64x64} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
    }
  }
  util.func public @matmul(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
    %c = flow.dispatch @matmul_kernels::@matmul(%a, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    util.return %c : tensor<256x256xf32>
  }
}
