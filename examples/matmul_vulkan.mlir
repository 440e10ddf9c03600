// A matmul with three workgroup-tile variants for IREE's SPIR-V code generator (Vulkan),
// chosen at run time by an autotune group: workgroup tile [M, N], thread tile [M, N] (the
// workgroup has (N/n) x (M/m) threads, at most 128 for IREE's default Vulkan target) and a
// reduction tile of 4, in the BaseVectorize pipeline IREE itself picks for this matmul.
// `iree-autotune compile matmul_vulkan.mlir --target vulkan -o matmul.vmfb`
#mm_8x64 = #iree_codegen.compilation_info<lowering_config = #iree_codegen.lowering_config<tile_sizes = [[8, 64], [4, 4], [0, 0, 4]]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<BaseVectorize> workgroup_size = [16, 2, 1]>>
#mm_16x256 = #iree_codegen.compilation_info<lowering_config = #iree_codegen.lowering_config<tile_sizes = [[16, 256], [8, 8], [0, 0, 4]]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<BaseVectorize> workgroup_size = [32, 2, 1]>>
#mm_32x64 = #iree_codegen.compilation_info<lowering_config = #iree_codegen.lowering_config<tile_sizes = [[32, 64], [4, 4], [0, 0, 4]]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<BaseVectorize> workgroup_size = [16, 8, 1]>>
module {
  flow.executable private @matmul_kernels {
    flow.executable.export public @mm_8x64 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_16x256 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_32x64 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @matmul variants([@mm_8x64, @mm_16x256, @mm_32x64])
    builtin.module {
      func.func @mm_8x64(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_8x64} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
      func.func @mm_16x256(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_16x256} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %c, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
      func.func @mm_32x64(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32>
        %init = tensor.empty() : tensor<256x256xf32>
        %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256x256xf32>) -> tensor<256x256xf32>
        %c = linalg.matmul {compilation_info = #mm_32x64} ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%acc : tensor<256x256xf32>) -> tensor<256x256xf32>
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
