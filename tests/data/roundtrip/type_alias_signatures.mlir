// Type aliases (!tensor_t, !dyn_t, !in_t/!out_t dispatch tensor types) used in util.func signatures, flow.dispatch types and kernel signatures, together with #config/#map attribute aliases.
!tensor_t = tensor<64x64xf32>
!dyn_t = tensor<?x64xf32>
!in_t = !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x64xf32>>
!out_t = !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64x64xf32>>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map_t = affine_map<(d0, d1) -> (d1, d0)>
#config = #iree_codegen.compilation_info<lowering_config = #iree_cpu.lowering_config<distribution = [16, 16], vector_common_parallel = [4, 4]>, translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>>
module {
  flow.executable private @transpose_ex {
    flow.executable.export public @transpose workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @transpose(%in: !in_t, %out: !out_t) {
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !in_t -> !tensor_t
        %1 = tensor.empty() : !tensor_t
        %2 = linalg.generic {indexing_maps = [#map_t, #map], iterator_types = ["parallel", "parallel"], compilation_info = #config} ins(%0 : !tensor_t) outs(%1 : !tensor_t) {
        ^bb0(%a: f32, %o: f32):
          linalg.yield %a : f32
        } -> !tensor_t
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0, 0], sizes = [64, 64], strides = [1, 1] : !tensor_t -> !out_t
        return
      }
    }
  }
  util.global private mutable @cache : !tensor_t
  util.func public @transpose(%arg0: !tensor_t) -> !tensor_t {
    %0 = flow.dispatch @transpose_ex::@transpose(%arg0) : (!tensor_t) -> !tensor_t
    util.global.store %0, @cache : !tensor_t
    util.return %0 : !tensor_t
  }
  util.func public @cached() -> !tensor_t {
    %0 = util.global.load @cache : !tensor_t
    util.return %0 : !tensor_t
  }
  util.func private @consume(%a: !tensor_t, %b: !dyn_t) -> (!tensor_t, !dyn_t)
  util.func public @forward(%a: !tensor_t, %b: !dyn_t) -> (!tensor_t, !dyn_t) {
    %0:2 = util.call @consume(%a, %b) : (!tensor_t, !dyn_t) -> (!tensor_t, !dyn_t)
    util.return %0#0, %0#1 : !tensor_t, !dyn_t
  }
}
