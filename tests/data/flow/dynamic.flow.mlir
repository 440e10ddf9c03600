module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>} {
  util.global private @__device_0 = #hal.device.target<"local", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device loc("src/dynamic.mlir":0:0)
  flow.executable private @dynamic_dispatch_0 {
    flow.executable.export public @dynamic_dispatch_0_matmul_Dx256x256_f32 workgroups(%arg0: index loc("src/dynamic.mlir":2:1)) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0) loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
      flow.return %x, %y, %z : index, index, index loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
    } loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
    builtin.module {
      func.func @dynamic_dispatch_0_matmul_Dx256x256_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x256xf32>> loc("src/dynamic.mlir":2:1), %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> loc("src/dynamic.mlir":2:1), %arg2: index loc("src/dynamic.mlir":2:1), %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x256xf32>> loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))) {
        %cst = arith.constant 0.000000e+00 : f32 loc(callsite("src/dynamic.mlir":3:11 at "src/dynamic.mlir":2:1))
        %0 = iree_tensor_ext.dispatch.workload.ordinal %arg2, 0 : index loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        %1 = flow.dispatch.tie_shape %arg0 : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x256xf32>>{%0} loc("src/dynamic.mlir":2:1)
        %2 = flow.dispatch.tie_shape %arg3 : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x256xf32>>{%0} loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        %3 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0], sizes = [%0, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x256xf32>>{%0} -> tensor<?x256xf32> loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        %4 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [256, 256], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256x256xf32>> -> tensor<256x256xf32> loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        %5 = tensor.empty(%0) : tensor<?x256xf32> loc(callsite("src/dynamic.mlir":6:12 at "src/dynamic.mlir":2:1))
        %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<?x256xf32>) -> tensor<?x256xf32> loc(callsite("src/dynamic.mlir":7:11 at "src/dynamic.mlir":2:1))
        %7 = linalg.matmul ins(%3, %4 : tensor<?x256xf32>, tensor<256x256xf32>) outs(%6 : tensor<?x256xf32>) -> tensor<?x256xf32> loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<?x256xf32>) outs(%5 : tensor<?x256xf32>) {
        ^bb0(%in: f32 loc(callsite("src/dynamic.mlir":11:8 at "src/dynamic.mlir":2:1)), %out: f32 loc(callsite("src/dynamic.mlir":11:17 at "src/dynamic.mlir":2:1))):
          %9 = arith.maximumf %in, %cst : f32 loc(callsite("src/dynamic.mlir":12:10 at "src/dynamic.mlir":2:1))
          linalg.yield %9 : f32 loc(callsite("src/dynamic.mlir":13:5 at "src/dynamic.mlir":2:1))
        } -> tensor<?x256xf32> loc(callsite("src/dynamic.mlir":9:10 at "src/dynamic.mlir":2:1))
        iree_tensor_ext.dispatch.tensor.store %8, %2, offsets = [0, 0], sizes = [%0, 256], strides = [1, 1] : tensor<?x256xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x256xf32>>{%0} loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
        return loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
      } loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
    } loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
  } loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
  util.func public @dynamic(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @dynamic(%input0: tensor<?x256xf32>, %input1: tensor<256x256xf32>) -> (%output0: tensor<?x256xf32>)"}} {
    %0 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index loc("src/dynamic.mlir":2:1)
    %1 = hal.tensor.import %arg0 "input0" : !hal.buffer_view -> tensor<?x256xf32>{%0} loc("src/dynamic.mlir":2:1)
    %2 = hal.tensor.import %arg1 "input1" : !hal.buffer_view -> tensor<256x256xf32> loc("src/dynamic.mlir":2:1)
    %3 = flow.dispatch @dynamic_dispatch_0::@dynamic_dispatch_0_matmul_Dx256x256_f32[%0](%1, %2, %0) : (tensor<?x256xf32>{%0}, tensor<256x256xf32>, index) -> tensor<?x256xf32>{%0} loc(callsite("src/dynamic.mlir":8:9 at "src/dynamic.mlir":2:1))
    %4 = hal.tensor.export %3 "output0" : tensor<?x256xf32>{%0} -> !hal.buffer_view loc("src/dynamic.mlir":2:1)
    util.return %4 : !hal.buffer_view loc("src/dynamic.mlir":2:1)
  } loc("src/dynamic.mlir":2:1)
} loc("src/dynamic.mlir":0:0)