// iree-opt printed form of a multi-variant flow.executable: generated #config/#translation/#compilation aliases referencing each other, %argN names, nested scf.if.
#config = #iree_cpu.lowering_config<distribution = [32, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 4]>
#config1 = #iree_cpu.lowering_config<distribution = [64, 64, 0], vector_common_parallel = [16, 16, 0], vector_reduction = [0, 0, 8]>
#config2 = #iree_cpu.lowering_config<distribution = [16, 64, 0], vector_common_parallel = [4, 4, 0], vector_reduction = [0, 0, 16]>
#config3 = #iree_cpu.lowering_config<distribution = [128, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 2]>
#executable_target_embedded_elf_x86_64 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#translation = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
#compilation = #iree_codegen.compilation_info<lowering_config = #config, translation_info = #translation>
#compilation1 = #iree_codegen.compilation_info<lowering_config = #config1, translation_info = #translation>
#compilation2 = #iree_codegen.compilation_info<lowering_config = #config2, translation_info = #translation>
#compilation3 = #iree_codegen.compilation_info<lowering_config = #config3, translation_info = #translation>
#device_target_llvm_cpu = #hal.device.target<"llvm-cpu", [#executable_target_embedded_elf_x86_64]> : !hal.device
module @tiles attributes {hal.device.targets = [#device_target_llvm_cpu]} {
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
      func.func @mm_0(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %2 = tensor.empty() : tensor<128x64xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<128x64xf32>) -> tensor<128x64xf32>
        %4 = linalg.matmul {compilation_info = #compilation} ins(%0, %1 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%3 : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      func.func @mm_1(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %2 = tensor.empty() : tensor<128x64xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<128x64xf32>) -> tensor<128x64xf32>
        %4 = linalg.matmul {compilation_info = #compilation1} ins(%0, %1 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%3 : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      func.func @mm_2(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %2 = tensor.empty() : tensor<128x64xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<128x64xf32>) -> tensor<128x64xf32>
        %4 = linalg.matmul {compilation_info = #compilation2} ins(%0, %1 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%3 : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
      func.func @mm_3(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [128, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x256xf32>> -> tensor<128x256xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x64xf32>> -> tensor<256x64xf32>
        %2 = tensor.empty() : tensor<128x64xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<128x64xf32>) -> tensor<128x64xf32>
        %4 = linalg.matmul {compilation_info = #compilation3} ins(%0, %1 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%3 : tensor<128x64xf32>) -> tensor<128x64xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : tensor<128x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x64xf32>>
        return
      }
    }
  }
  util.func public @matmul(%arg0: tensor<128x256xf32>, %arg1: tensor<256x64xf32>) -> tensor<128x64xf32> {
    %variant = util.global.load @variant : index
    %c0 = arith.constant 0 : index
    %0 = arith.cmpi eq, %variant, %c0 : index
    %1 = scf.if %0 -> (tensor<128x64xf32>) {
      %2 = flow.dispatch @mm_variants::@mm_0(%arg0, %arg1) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
      scf.yield %2 : tensor<128x64xf32>
    } else {
      %c1 = arith.constant 1 : index
      %2 = arith.cmpi eq, %variant, %c1 : index
      %3 = scf.if %2 -> (tensor<128x64xf32>) {
        %4 = flow.dispatch @mm_variants::@mm_1(%arg0, %arg1) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
        scf.yield %4 : tensor<128x64xf32>
      } else {
        %c2 = arith.constant 2 : index
        %4 = arith.cmpi eq, %variant, %c2 : index
        %5 = scf.if %4 -> (tensor<128x64xf32>) {
          %6 = flow.dispatch @mm_variants::@mm_2(%arg0, %arg1) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
          scf.yield %6 : tensor<128x64xf32>
        } else {
          %6 = flow.dispatch @mm_variants::@mm_3(%arg0, %arg1) : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
          scf.yield %6 : tensor<128x64xf32>
        }
        scf.yield %5 : tensor<128x64xf32>
      }
      scf.yield %3 : tensor<128x64xf32>
    }
    util.return %1 : tensor<128x64xf32>
  }
}

