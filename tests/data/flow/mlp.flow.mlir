module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device loc("src/mlp.mlir":0:0)
  flow.executable private @mlp_dispatch_0 {
    flow.executable.export public @mlp_dispatch_0_matmul_16x512x256_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
    } loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
    builtin.module {
      func.func @mlp_dispatch_0_matmul_16x512x256_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x256xf32>> loc("src/mlp.mlir":4:1), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>> loc("src/mlp.mlir":4:1), %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<512xf32>> loc("src/mlp.mlir":4:1), %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x512xf32>> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite("src/mlp.mlir":6:11 at "src/mlp.mlir":4:1))
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [16, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x256xf32>> -> tensor<16x256xf32> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 512], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x512xf32>> -> tensor<256x512xf32> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [512], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<512xf32>> -> tensor<512xf32> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
        %3 = tensor.empty() : tensor<16x512xf32> loc(callsite("src/mlp.mlir":7:9 at "src/mlp.mlir":4:1))
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<16x512xf32>) -> tensor<16x512xf32> loc(callsite("src/mlp.mlir":8:9 at "src/mlp.mlir":4:1))
        %5 = linalg.matmul ins(%0, %1 : tensor<16x256xf32>, tensor<256x512xf32>) outs(%4 : tensor<16x512xf32>) -> tensor<16x512xf32> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %2 : tensor<16x512xf32>, tensor<512xf32>) outs(%3 : tensor<16x512xf32>) {
        ^bb0(%in: f32 loc(callsite("src/mlp.mlir":12:8 at "src/mlp.mlir":4:1)), %in_0: f32 loc(callsite("src/mlp.mlir":12:17 at "src/mlp.mlir":4:1)), %out: f32 loc(callsite("src/mlp.mlir":12:26 at "src/mlp.mlir":4:1))):
          %7 = arith.addf %in, %in_0 : f32 loc(callsite("src/mlp.mlir":13:10 at "src/mlp.mlir":4:1))
          %8 = arith.maximumf %7, %cst : f32 loc(callsite("src/mlp.mlir":14:10 at "src/mlp.mlir":4:1))
          linalg.yield %8 : f32 loc(callsite("src/mlp.mlir":15:5 at "src/mlp.mlir":4:1))
        } -> tensor<16x512xf32> loc(callsite("src/mlp.mlir":10:8 at "src/mlp.mlir":4:1))
        iree_tensor_ext.dispatch.tensor.store %6, %arg3, offsets = [0, 0], sizes = [16, 512], strides = [1, 1] : tensor<16x512xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x512xf32>> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
        return loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
      } loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
    } loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
  } loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
  flow.executable private @mlp_dispatch_1 {
    flow.executable.export public @mlp_dispatch_1_matmul_16x128x512_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
    } loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
    builtin.module {
      func.func @mlp_dispatch_1_matmul_16x128x512_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x512xf32>> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1)), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x128xf32>> loc("src/mlp.mlir":4:1), %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf32>> loc("src/mlp.mlir":4:1), %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x128xf32>> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite("src/mlp.mlir":6:11 at "src/mlp.mlir":4:1))
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [16, 512], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x512xf32>> -> tensor<16x512xf32> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [512, 128], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<512x128xf32>> -> tensor<512x128xf32> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [128], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128xf32>> -> tensor<128xf32> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
        %3 = tensor.empty() : tensor<16x128xf32> loc(callsite("src/mlp.mlir":17:9 at "src/mlp.mlir":4:1))
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<16x128xf32>) -> tensor<16x128xf32> loc(callsite("src/mlp.mlir":18:9 at "src/mlp.mlir":4:1))
        %5 = linalg.matmul ins(%0, %1 : tensor<16x512xf32>, tensor<512x128xf32>) outs(%4 : tensor<16x128xf32>) -> tensor<16x128xf32> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
        %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %2 : tensor<16x128xf32>, tensor<128xf32>) outs(%3 : tensor<16x128xf32>) {
        ^bb0(%in: f32 loc(callsite("src/mlp.mlir":22:8 at "src/mlp.mlir":4:1)), %in_0: f32 loc(callsite("src/mlp.mlir":22:17 at "src/mlp.mlir":4:1)), %out: f32 loc(callsite("src/mlp.mlir":22:26 at "src/mlp.mlir":4:1))):
          %7 = arith.addf %in, %in_0 : f32 loc(callsite("src/mlp.mlir":23:10 at "src/mlp.mlir":4:1))
          linalg.yield %7 : f32 loc(callsite("src/mlp.mlir":24:5 at "src/mlp.mlir":4:1))
        } -> tensor<16x128xf32> loc(callsite("src/mlp.mlir":20:8 at "src/mlp.mlir":4:1))
        iree_tensor_ext.dispatch.tensor.store %6, %arg3, offsets = [0, 0], sizes = [16, 128], strides = [1, 1] : tensor<16x128xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x128xf32>> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
        return loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
      } loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
    } loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
  } loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
  util.func public @mlp(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view, %arg3: !hal.buffer_view, %arg4: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @mlp(%input0: tensor<16x256xf32>, %input1: tensor<256x512xf32>, %input2: tensor<512xf32>, %input3: tensor<512x128xf32>, %input4: tensor<128xf32>) -> (%output0: tensor<16x128xf32>)"}} {
    %0 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<16x256xf32> loc("src/mlp.mlir":4:1)
    %1 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<256x512xf32> loc("src/mlp.mlir":4:1)
    %2 = hal.tensor.import %arg2 "input2" : !hal.buffer_view -> tensor<512xf32> loc("src/mlp.mlir":4:1)
    %3 = hal.tensor.import %arg3 "input3" : !hal.buffer_view -> tensor<512x128xf32> loc("src/mlp.mlir":4:1)
    %4 = hal.tensor.import %arg4 "input4" : !hal.buffer_view -> tensor<128xf32> loc("src/mlp.mlir":4:1)
    %5 = flow.dispatch @mlp_dispatch_0::@mlp_dispatch_0_matmul_16x512x256_f32(%0, %1, %2) : (tensor<16x256xf32>, tensor<256x512xf32>, tensor<512xf32>) -> tensor<16x512xf32> loc(callsite("src/mlp.mlir":9:9 at "src/mlp.mlir":4:1))
    %6 = flow.dispatch @mlp_dispatch_1::@mlp_dispatch_1_matmul_16x128x512_f32(%5, %3, %4) : (tensor<16x512xf32>, tensor<512x128xf32>, tensor<128xf32>) -> tensor<16x128xf32> loc(callsite("src/mlp.mlir":19:9 at "src/mlp.mlir":4:1))
    %7 = hal.tensor.export %6 "output0" : tensor<16x128xf32> -> !hal.buffer_view loc("src/mlp.mlir":4:1)
    util.return %7 : !hal.buffer_view loc("src/mlp.mlir":4:1)
  } loc("src/mlp.mlir":4:1)
} loc("src/mlp.mlir":0:0)