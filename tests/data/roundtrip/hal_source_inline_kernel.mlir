// hal.executable.source with an inline builtin.module kernel (hal.interface.* ops, #map aliases and comments inside the kernel) on an llvm-cpu target.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#map = affine_map<(d0) -> (d0)>
#cpu = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "generic", cpu_features = "", native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
module attributes {hal.device.targets = [#hal.device.target<"local", [#cpu]> : !hal.device]} {
  hal.executable.source private @vec_add {
    hal.executable.export public @vec_add ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %x = arith.ceildivui %n, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @vec_add() {
        %c0 = arith.constant 0 : index
        // Dynamic length comes in as push constant 0.
        %n_i32 = hal.interface.constant.load layout(#layout) ordinal(0) : i32
        %n = arith.index_cast %n_i32 : i32 to index
        %lhs = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>{%n}
        %rhs = hal.interface.binding.subspan layout(#layout) binding(1) alignment(64) offset(%c0) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>{%n}
        %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xf32>>{%n}
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0], sizes = [%n], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>{%n} -> tensor<?xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0], sizes = [%n], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>{%n} -> tensor<?xf32>
        %init = tensor.empty(%n) : tensor<?xf32>
        %sum = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%init : tensor<?xf32>) {
        ^bb0(%x: f32, %y: f32, %o: f32):
          %s = arith.addf %x, %y : f32
          linalg.yield %s : f32
        } -> tensor<?xf32>
        iree_tensor_ext.dispatch.tensor.store %sum, %out, offsets = [0], sizes = [%n], strides = [1] : tensor<?xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?xf32>>{%n}
        return
      }
    }
  }
  hal.executable.source private @scale {
    hal.executable.export public @scale ordinal(0) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      hal.return %c4, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @scale() {
        %c0 = arith.constant 0 : index
        %cst = arith.constant 2.500000e+00 : f32
        %in = hal.interface.binding.subspan layout(#layout) binding(0) alignment(64) offset(%c0) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256xf32>>
        %out = hal.interface.binding.subspan layout(#layout) binding(2) alignment(64) offset(%c0) : !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256xf32>>
        %wg = hal.interface.workgroup.id[0] : index
        %off = affine.apply affine_map<()[s0] -> (s0 * 64)>()[%wg]
        %a = iree_tensor_ext.dispatch.tensor.load %in, offsets = [%off], sizes = [64], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<256xf32>> -> tensor<64xf32>
        %init = tensor.empty() : tensor<64xf32>
        %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : tensor<64xf32>) outs(%init : tensor<64xf32>) {
        ^bb0(%x: f32, %o: f32):
          %m = arith.mulf %x, %cst : f32 // scale
          linalg.yield %m : f32
        } -> tensor<64xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [%off], sizes = [64], strides = [1] : tensor<64xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<256xf32>>
        return
      }
    }
  }
}
