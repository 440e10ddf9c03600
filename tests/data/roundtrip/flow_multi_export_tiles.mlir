// One flow.executable with several exports, each its own kernel func with a different #config alias (tile sizes), selected by an scf.if chain on a util.global.
#config0 = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [32, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 4]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
#config1 = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [64, 64, 0], vector_common_parallel = [16, 16, 0], vector_reduction = [0, 0, 8]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
#config2 = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 64, 0], vector_common_parallel = [4, 4, 0], vector_reduction = [0, 0, 16]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
#config3 = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [128, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 2]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
#cpu = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
module @tiles attributes {hal.device.targets = [#hal.device.target<"llvm-cpu", [#cpu]> : !hal.device]} {
  util.global private mutable @variant = 0 : index
  flow.executable private @mm_variants {
    flow.executable.export public @mm_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_2 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_3 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      // Variant 0: tile 32x32x4
      func.func @mm_0(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %e = tensor.empty() : tensor<128x64xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
        %r = linalg.matmul {compilation_info = #config0} ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      // Variant 1: tile 64x64x8
      func.func @mm_1(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %e = tensor.empty() : tensor<128x64xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
        %r = linalg.matmul {compilation_info = #config1} ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      // Variant 2: tile 16x64x16
      func.func @mm_2(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %e = tensor.empty() : tensor<128x64xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
        %r = linalg.matmul {compilation_info = #config2} ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      // Variant 3: tile 128x32x2
      func.func @mm_3(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %e = tensor.empty() : tensor<128x64xf32>
        %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
        %r = linalg.matmul {compilation_info = #config3} ins(%a, %b : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
    }
  }
  util.func public @matmul(%lhs: tensor<128x256xf32>, %rhs: tensor<256x64xf32>) -> tensor<128x64xf32> {
    %v = util.global.load @variant : index
    %c0 = arith.constant 0 : index
    %is0 = arith.cmpi eq, %v, %c0 : index
    %r0 = scf.if %is0 -> (tensor<128x64xf32>) {
      %d0 = flow.dispatch @mm_variants::@mm_0(%lhs, %rhs) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      scf.yield %d0 : tensor<128x64xf32>
    } else {
      %c1 = arith.constant 1 : index
      %is1 = arith.cmpi eq, %v, %c1 : index
      %r1 = scf.if %is1 -> (tensor<128x64xf32>) {
        %d1 = flow.dispatch @mm_variants::@mm_1(%lhs, %rhs) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
        scf.yield %d1 : tensor<128x64xf32>
      } else {
        %c2 = arith.constant 2 : index
        %is2 = arith.cmpi eq, %v, %c2 : index
        %r2 = scf.if %is2 -> (tensor<128x64xf32>) {
          %d2 = flow.dispatch @mm_variants::@mm_2(%lhs, %rhs) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
          scf.yield %d2 : tensor<128x64xf32>
        } else {
          %d3 = flow.dispatch @mm_variants::@mm_3(%lhs, %rhs) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
          scf.yield %d3 : tensor<128x64xf32>
        }
        scf.yield %r2 : tensor<128x64xf32>
      }
      scf.yield %r1 : tensor<128x64xf32>
    }
    util.return %r0 : tensor<128x64xf32>
  }
}
