module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device loc("src/attention.mlir":0:0)
  flow.executable private @attention_dispatch_0 {
    flow.executable.export public @attention_dispatch_0_matmul_64x64x32_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
    builtin.module {
      func.func @attention_dispatch_0_matmul_64x64x32_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> loc("src/attention.mlir":2:1), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> loc("src/attention.mlir":2:1), %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite(unknown at "src/attention.mlir":2:1))
        %cst_0 = arith.constant 0.176776692 : f32 loc(callsite("src/attention.mlir":5:13 at "src/attention.mlir":2:1))
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [64, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> -> tensor<64x32xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [64, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> -> tensor<64x32xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %2 = tensor.empty() : tensor<64x64xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<64x64xf32>) -> tensor<64x64xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %4 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%0, %1 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%3 : tensor<64x64xf32>) -> tensor<64x64xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<64x64xf32>) outs(%2 : tensor<64x64xf32>) {
        ^bb0(%in: f32 loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1)), %out: f32 loc(callsite("src/attention.mlir":5:13 at "src/attention.mlir":2:1))):
          %6 = arith.mulf %in, %cst_0 : f32 loc(callsite("src/attention.mlir":5:13 at "src/attention.mlir":2:1))
          linalg.yield %6 : f32 loc(callsite("src/attention.mlir":5:13 at "src/attention.mlir":2:1))
        } -> tensor<64x64xf32> loc(callsite("src/attention.mlir":5:13 at "src/attention.mlir":2:1))
        iree_tensor_ext.dispatch.tensor.store %5, %arg2, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : tensor<64x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        return loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
      } loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
  } loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
  flow.executable private @attention_dispatch_1 {
    flow.executable.export public @attention_dispatch_1_softmax_64x64xf32_dispatch_tensor_store workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
    builtin.module {
      func.func @attention_dispatch_1_softmax_64x64xf32_dispatch_tensor_store(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1)), %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
        %1 = tensor.empty() : tensor<64x64xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
        %2 = linalg.softmax dimension(1) ins(%0 : tensor<64x64xf32>) outs(%1 : tensor<64x64xf32>) -> tensor<64x64xf32> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : tensor<64x64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
        return loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
      } loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
  } loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
  flow.executable private @attention_dispatch_2 {
    flow.executable.export public @attention_dispatch_2_matmul_64x32x64_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
    builtin.module {
      func.func @attention_dispatch_2_matmul_64x32x64_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1)), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> loc("src/attention.mlir":2:1), %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x32xf32>> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite(unknown at "src/attention.mlir":2:1))
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>> -> tensor<64x64xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [64, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> -> tensor<64x32xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        %2 = tensor.empty() : tensor<64x32xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<64x32xf32>) -> tensor<64x32xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        %4 = linalg.matmul ins(%0, %1 : tensor<64x64xf32>, tensor<64x32xf32>) outs(%3 : tensor<64x32xf32>) -> tensor<64x32xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [64, 32], strides = [1, 1] : tensor<64x32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x32xf32>> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
        return loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
      } loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
    } loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
  } loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
  util.func public @attention(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @attention(%input0: tensor<64x32xf32>, %input1: tensor<64x32xf32>, %input2: tensor<64x32xf32>) -> (%output0: tensor<64x32xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<64x32xf32> loc("src/attention.mlir":2:1)
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<64x32xf32> loc("src/attention.mlir":2:1)
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<64x32xf32> loc("src/attention.mlir":2:1)
    %3 = flow.dispatch @attention_dispatch_0::@attention_dispatch_0_matmul_64x64x32_f32(%0, %1) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x64xf32> loc(callsite("src/attention.mlir":3:8 at "src/attention.mlir":2:1))
    %4 = flow.dispatch @attention_dispatch_1::@attention_dispatch_1_softmax_64x64xf32_dispatch_tensor_store(%3) : (tensor<64x64xf32>) -> tensor<64x64xf32> loc(callsite("src/attention.mlir":14:8 at "src/attention.mlir":2:1))
    %5 = flow.dispatch @attention_dispatch_2::@attention_dispatch_2_matmul_64x32x64_f32(%4, %2) : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32> loc(callsite("src/attention.mlir":15:8 at "src/attention.mlir":2:1))
    %6 = hal.tensor.export %5 "output0" : tensor<64x32xf32> -> !hal.buffer_view loc("src/attention.mlir":2:1)
    util.return %6 : !hal.buffer_view loc("src/attention.mlir":2:1)
  } loc("src/attention.mlir":2:1)
} loc("src/attention.mlir":0:0)