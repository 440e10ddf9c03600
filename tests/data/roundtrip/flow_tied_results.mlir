// Tied (in-place) flow.dispatch results: `-> %a`, `-> %arg0{%n}` and a mixed tied/untied multi-result dispatch over readwrite bindings.
#map = affine_map<(d0) -> (d0)>
module {
  flow.executable private @inplace_ex {
    flow.executable.export public @inc_static workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @inc_dynamic workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @split workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      flow.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func @inc_static(%buf: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>>) {
        %one = arith.constant 1.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %buf, offsets = [0], sizes = [16], strides = [1] : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>> -> tensor<16xf32>
        %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%0 : tensor<16xf32>) {
        ^bb0(%o: f32):
          %2 = arith.addf %o, %one : f32
          linalg.yield %2 : f32
        } -> tensor<16xf32>
        iree_tensor_ext.dispatch.tensor.store %1, %buf, offsets = [0], sizes = [16], strides = [1] : tensor<16xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>>
        return
      }
      func.func @inc_dynamic(%buf: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<?xf32>>, %n_arg: index) {
        %one = arith.constant 1.000000e+00 : f32
        %n = iree_tensor_ext.dispatch.workload.ordinal %n_arg, 0 : index
        %0 = iree_tensor_ext.dispatch.tensor.load %buf, offsets = [0], sizes = [%n], strides = [1] : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<?xf32>>{%n} -> tensor<?xf32>
        %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%0 : tensor<?xf32>) {
        ^bb0(%o: f32):
          %2 = arith.addf %o, %one : f32
          linalg.yield %2 : f32
        } -> tensor<?xf32>
        iree_tensor_ext.dispatch.tensor.store %1, %buf, offsets = [0], sizes = [%n], strides = [1] : tensor<?xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<?xf32>>{%n}
        return
      }
      func.func @split(%buf: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>>, %copy: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %buf, offsets = [0], sizes = [16], strides = [1] : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>> -> tensor<16xf32>
        iree_tensor_ext.dispatch.tensor.store %0, %copy, offsets = [0], sizes = [16], strides = [1] : tensor<16xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16xf32>>
        iree_tensor_ext.dispatch.tensor.store %0, %buf, offsets = [0], sizes = [16], strides = [1] : tensor<16xf32> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<16xf32>>
        return
      }
    }
  }
  util.func public @inc_static(%a: tensor<16xf32>) -> tensor<16xf32> {
    %0 = flow.dispatch @inplace_ex::@inc_static(%a) : (tensor<16xf32>) -> %a
    util.return %0 : tensor<16xf32>
  }
  util.func public @inc_dynamic(%arg0: tensor<?xf32>, %arg1: index) -> tensor<?xf32> {
    %0 = flow.dispatch @inplace_ex::@inc_dynamic[%arg1](%arg0, %arg1) : (tensor<?xf32>{%arg1}, index) -> %arg0{%arg1}
    %1 = flow.tensor.tie_shape %0 : tensor<?xf32>{%arg1}
    util.return %1 : tensor<?xf32>
  }
  util.func public @split(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
    %0:2 = flow.dispatch @inplace_ex::@split(%a) : (tensor<16xf32>) -> (%a, tensor<16xf32>)
    util.return %0#0, %0#1 : tensor<16xf32>, tensor<16xf32>
  }
}
