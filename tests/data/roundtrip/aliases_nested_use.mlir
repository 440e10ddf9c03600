// Attribute aliases defined in terms of other aliases and used inside other attributes (objects dict keys, device targets, compilation_info), in ops, and inside kernel bodies.
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#cpu = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#cuda_device = #hal.device.target<"cuda", [#cuda]> : !hal.device
#ptx = #hal.executable.object<{path = "aliases.ptx"}>
#objects = #hal.executable.objects<{#cuda = [#ptx]}>
#ro = #hal.pipeline.binding<storage_buffer, ReadOnly>
#rw = #hal.pipeline.binding<storage_buffer>
#layout = #hal.pipeline.layout<constants = 1, bindings = [#ro, #ro, #rw]>
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#lowering = #iree_cpu.lowering_config<distribution = [32, 32, 0], vector_common_parallel = [8, 8, 0], vector_reduction = [0, 0, 4]>
#translation = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>
#compilation = #iree_codegen.compilation_info<lowering_config = #lowering, translation_info = #translation>
module attributes {hal.device.targets = [#cuda_device, #hal.device.target<"local", [#cpu]> : !hal.device]} {
  hal.executable.source private @ptx_exe <{objects = #objects}> {
    hal.executable.export public @mm ordinal(0) layout(#layout) count(%device: !hal.device, %w: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %w, %c1, %c1 : index, index, index
    }
  }
  hal.executable.source private @ptx_exe2 <{objects = #hal.executable.objects<{#cuda = [#ptx, #hal.executable.object<{path = "more.ptx"}>]}>}> {
    hal.executable.export public @mm2 ordinal(0) layout(#hal.pipeline.layout<bindings = [#ro, #rw]>)
  }
  flow.executable private @cpu_exe {
    flow.executable.export public @mm workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @mm(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x64xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x32xf32>>) attributes {translation_info = #translation} {
        %cst = arith.constant 0.000000e+00 : f32
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [128, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x64xf32>> -> tensor<128x64xf32>
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [64, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32xf32>> -> tensor<64x32xf32>
        %e = tensor.empty() : tensor<128x32xf32>
        %f = linalg.fill {lowering_config = #lowering} ins(%cst : f32) outs(%e : tensor<128x32xf32>) -> tensor<128x32xf32>
        %r = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], compilation_info = #compilation} ins(%a, %b : tensor<128x64xf32>, tensor<64x32xf32>) outs(%f : tensor<128x32xf32>) {
        ^bb0(%x: f32, %y: f32, %acc: f32):
          %m = arith.mulf %x, %y : f32
          %s = arith.addf %acc, %m : f32
          linalg.yield %s : f32
        } -> tensor<128x32xf32>
        iree_tensor_ext.dispatch.tensor.store %r, %out, offsets = [0, 0], sizes = [128, 32], strides = [1, 1] : tensor<128x32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<128x32xf32>>
        return
      }
    }
  }
  util.func public @run(%a: tensor<128x64xf32>, %b: tensor<64x32xf32>) -> (tensor<128x32xf32>, tensor<128x32xf32>) attributes {autotune.objects = #objects, autotune.layout = #layout} {
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : i32
    %0 = flow.dispatch @cpu_exe::@mm(%a, %b) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    %1 = flow.dispatch @ptx_exe::@mm[%c1](%n, %a, %b) : (i32, tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    util.return %0, %1 : tensor<128x32xf32>, tensor<128x32xf32>
  }
}
