module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device loc("src/conv.mlir":0:0)
  flow.executable private @conv_dispatch_0 {
    flow.executable.export public @conv_dispatch_0_conv_2x32x32x32x3x3x16_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
    } loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
    builtin.module {
      func.func @conv_dispatch_0_conv_2x32x32x32x3x3x16_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x34x34x16xf32>> loc("src/conv.mlir":2:1), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x16x32xf32>> loc("src/conv.mlir":2:1), %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf32>> loc("src/conv.mlir":2:1), %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x32x32x32xf32>> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite("src/conv.mlir":3:11 at "src/conv.mlir":2:1))
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0, 0], sizes = [2, 34, 34, 16], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<2x34x34x16xf32>> -> tensor<2x34x34x16xf32> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0, 0], sizes = [3, 3, 16, 32], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<3x3x16x32xf32>> -> tensor<3x3x16x32xf32> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [32], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32xf32>> -> tensor<32xf32> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
        %3 = tensor.empty() : tensor<2x32x32x32xf32> loc(callsite("src/conv.mlir":4:12 at "src/conv.mlir":2:1))
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32> loc(callsite("src/conv.mlir":5:11 at "src/conv.mlir":2:1))
        %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%0, %1 : tensor<2x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%4 : tensor<2x32x32x32xf32>) attrs =  {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} {
        ^bb0(%in: f32 loc(callsite(unknown at "src/conv.mlir":2:1)), %in_0: f32 loc(callsite(unknown at "src/conv.mlir":2:1)), %out: f32 loc(callsite(unknown at "src/conv.mlir":2:1))):
          %7 = arith.mulf %in, %in_0 : f32 loc(callsite(unknown at "src/conv.mlir":2:1))
          %8 = arith.addf %out, %7 : f32 loc(callsite(unknown at "src/conv.mlir":2:1))
          linalg.yield %8 : f32 loc(callsite(unknown at "src/conv.mlir":2:1))
        } -> tensor<2x32x32x32xf32> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%5, %2 : tensor<2x32x32x32xf32>, tensor<32xf32>) outs(%3 : tensor<2x32x32x32xf32>) {
        ^bb0(%in: f32 loc(callsite("src/conv.mlir":11:8 at "src/conv.mlir":2:1)), %in_0: f32 loc(callsite("src/conv.mlir":11:17 at "src/conv.mlir":2:1)), %out: f32 loc(callsite("src/conv.mlir":11:26 at "src/conv.mlir":2:1))):
          %7 = arith.addf %in, %in_0 : f32 loc(callsite("src/conv.mlir":12:10 at "src/conv.mlir":2:1))
          %8 = arith.maximumf %7, %cst : f32 loc(callsite("src/conv.mlir":13:10 at "src/conv.mlir":2:1))
          linalg.yield %8 : f32 loc(callsite("src/conv.mlir":14:5 at "src/conv.mlir":2:1))
        } -> tensor<2x32x32x32xf32> loc(callsite("src/conv.mlir":8:10 at "src/conv.mlir":2:1))
        iree_tensor_ext.dispatch.tensor.store %6, %arg3, offsets = [0, 0, 0, 0], sizes = [2, 32, 32, 32], strides = [1, 1, 1, 1] : tensor<2x32x32x32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<2x32x32x32xf32>> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
        return loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
      } loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
    } loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
  } loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
  util.func public @conv(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @conv(%input0: tensor<2x34x34x16xf32>, %input1: tensor<3x3x16x32xf32>, %input2: tensor<32xf32>) -> (%output0: tensor<2x32x32x32xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<2x34x34x16xf32> loc("src/conv.mlir":2:1)
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<3x3x16x32xf32> loc("src/conv.mlir":2:1)
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<32xf32> loc("src/conv.mlir":2:1)
    %3 = flow.dispatch @conv_dispatch_0::@conv_dispatch_0_conv_2x32x32x32x3x3x16_f32(%0, %1, %2) : (tensor<2x34x34x16xf32>, tensor<3x3x16x32xf32>, tensor<32xf32>) -> tensor<2x32x32x32xf32> loc(callsite("src/conv.mlir":6:11 at "src/conv.mlir":2:1))
    %4 = hal.tensor.export %3 "output0" : tensor<2x32x32x32xf32> -> !hal.buffer_view loc("src/conv.mlir":2:1)
    util.return %4 : !hal.buffer_view loc("src/conv.mlir":2:1)
  } loc("src/conv.mlir":2:1)
} loc("src/conv.mlir":0:0)