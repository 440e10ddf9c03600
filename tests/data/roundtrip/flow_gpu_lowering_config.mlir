// flow.executable kernels with #iree_gpu.lowering_config (workgroup/reduction/thread/subgroup tiles, mma_kind) and #iree_gpu.pipeline translation_info on a CUDA device target.
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#gpu_config = #iree_gpu.lowering_config<{workgroup = [64, 64, 0], reduction = [0, 0, 16], thread = [8, 4, 0]}>
#gpu_translation = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 1, 1] subgroup_size = 32>
#mma_info = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [128, 128, 0], reduction = [0, 0, 32], subgroup = [2, 2, 0], mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>, promote_operands = [0, 1]}>, translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [128, 2, 1] subgroup_size = 32, {gpu_pipeline_options = #iree_gpu.pipeline_options<prefetch_num_stages = 2>}>>
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  flow.executable private @gpu_ex {
    flow.executable.export public @mm_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @mm_f32(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x256xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>) attributes {translation_info = #gpu_translation} {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [256, 512], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>> -> tensor<256x512xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [512, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x256xf32>> -> tensor<512x256xf32>
        %e = tensor.empty() : tensor<256x256xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
        %r = linalg.matmul {lowering_config = #gpu_config} ins(%a, %b : tensor<256x512xf32>, tensor<512x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : tensor<256x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256x256xf32>>
        return
      }
      func.func @mm_f16(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024x1024xf16>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024x1024xf16>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024x1024xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [1024, 1024], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024x1024xf16>> -> tensor<1024x1024xf16>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [1024, 1024], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024x1024xf16>> -> tensor<1024x1024xf16>
        %e = tensor.empty() : tensor<1024x1024xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
        %r = linalg.matmul {compilation_info = #mma_info} ins(%a, %b : tensor<1024x1024xf16>, tensor<1024x1024xf16>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [1024, 1024], strides = [1, 1] : tensor<1024x1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024x1024xf32>>
        return
      }
    }
  }
  util.func public @run_f32(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> tensor<256x256xf32> {
    %0 = flow.dispatch @gpu_ex::@mm_f32(%a, %b) : (tensor<256x512xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    util.return %0 : tensor<256x256xf32>
  }
  util.func public @run_f16(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>) -> tensor<1024x1024xf32> {
    %0 = flow.dispatch @gpu_ex::@mm_f16(%a, %b) : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf32>
    util.return %0 : tensor<1024x1024xf32>
  }
}
