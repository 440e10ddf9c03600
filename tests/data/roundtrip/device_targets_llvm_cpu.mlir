// Module-level hal.device.targets with llvm-cpu executable targets (config dicts, two architectures), device-target aliases and a util.global initialized with a #hal.device.target.
#x86 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "znver4", cpu_features = "+avx512f,+avx512bw,+avx2,+fma", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, native_vector_size = 64 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf", ukernels = "none"}>
#arm = #hal.executable.target<"llvm-cpu", "embedded-elf-arm_64", {cpu = "generic", cpu_features = "+neon", native_vector_size = 16 : i64, target_triple = "aarch64-unknown-unknown-eabi-elf"}>
#local = #hal.device.target<"local", {ordinal = 0 : index}, [#x86, #arm]> : !hal.device
module @cpu_targets attributes {hal.device.targets = [#local, #hal.device.target<"llvm-cpu", [#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {target_triple = "x86_64-unknown-unknown-eabi-elf"}>]> : !hal.device]} {
  util.global private @__device_0 = #local
  flow.executable private @add_ex {
    flow.executable.export public @add workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @add(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xi32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xi32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xi32>>) {
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0], sizes = [1024], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xi32>> -> tensor<1024xi32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0], sizes = [1024], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xi32>> -> tensor<1024xi32>
        %e = tensor.empty() : tensor<1024xi32>
        %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"], lowering_config = #iree_cpu.lowering_config<distribution = [256], vector_common_parallel = [16]>} ins(%a, %b : tensor<1024xi32>, tensor<1024xi32>) outs(%e : tensor<1024xi32>) {
        ^bb0(%x: i32, %y: i32, %o: i32):
          %s = arith.addi %x, %y : i32
          linalg.yield %s : i32
        } -> tensor<1024xi32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0], sizes = [1024], strides = [1] : tensor<1024xi32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xi32>>
        return
      }
    }
  }
  util.func public @add(%a: tensor<1024xi32>, %b: tensor<1024xi32>) -> tensor<1024xi32> {
    %0 = flow.dispatch @add_ex::@add(%a, %b) : (tensor<1024xi32>, tensor<1024xi32>) -> tensor<1024xi32>
    util.return %0 : tensor<1024xi32>
  }
}
