// Dynamic shapes: flow.dispatch with workload and dynamic dims ({%n}), flow.tensor.tie_shape, tensor.dim, and kernels using iree_tensor_ext.dispatch.workload.ordinal.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  flow.executable private @ex {
    flow.executable.export public @fn workgroups(%arg0: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @fn(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x4xf32>>, %n_arg: index, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x4xf32>>) {
        %n = iree_tensor_ext.dispatch.workload.ordinal %n_arg, 0 : index
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0, 0], sizes = [%n, 4], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x4xf32>>{%n} -> tensor<?x4xf32>
        %1 = tensor.empty(%n) : tensor<?x4xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<?x4xf32>) outs(%1 : tensor<?x4xf32>) {
        ^bb0(%a: f32, %o: f32):
          %3 = arith.negf %a : f32
          linalg.yield %3 : f32
        } -> tensor<?x4xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0, 0], sizes = [%n, 4], strides = [1, 1] : tensor<?x4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x4xf32>>{%n}
        return
      }
    }
  }
  flow.executable private @bias_ex {
    flow.executable.export public @bias workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%arg0, %arg1)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @bias(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xf32>>, %bias: !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>, %m_arg: index, %n_arg: index, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x?xf32>>) {
        %m = iree_tensor_ext.dispatch.workload.ordinal %m_arg, 0 : index
        %n = iree_tensor_ext.dispatch.workload.ordinal %n_arg, 1 : index
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0, 0], sizes = [%m, %n], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xf32>>{%m, %n} -> tensor<?x?xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %bias, offsets = [0], sizes = [%n], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?xf32>>{%n} -> tensor<?xf32>
        %2 = tensor.empty(%m, %n) : tensor<?x?xf32>
        %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1 : tensor<?x?xf32>, tensor<?xf32>) outs(%2 : tensor<?x?xf32>) {
        ^bb0(%a: f32, %b: f32, %o: f32):
          %4 = arith.addf %a, %b : f32
          linalg.yield %4 : f32
        } -> tensor<?x?xf32>
        iree_tensor_ext.dispatch.tensor.store %3, %out, offsets = [0, 0], sizes = [%m, %n], strides = [1, 1] : tensor<?x?xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x?xf32>>{%m, %n}
        return
      }
    }
  }
  util.func public @negate(%a: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
    %r = flow.dispatch @ex::@fn[%n](%a, %n) : (tensor<?x4xf32>{%n}, index) -> tensor<?x4xf32>{%n}
    %t = flow.tensor.tie_shape %r : tensor<?x4xf32>{%n}
    util.return %t : tensor<?x4xf32>
  }
  util.func public @add_bias(%x: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %m = tensor.dim %x, %c0 : tensor<?x?xf32>
    %n = tensor.dim %x, %c1 : tensor<?x?xf32>
    %x_t = flow.tensor.tie_shape %x : tensor<?x?xf32>{%m, %n}
    %r = flow.dispatch @bias_ex::@bias[%m, %n](%x_t, %b, %m, %n) : (tensor<?x?xf32>{%m, %n}, tensor<?xf32>{%n}, index, index) -> tensor<?x?xf32>{%m, %n}
    util.return %r : tensor<?x?xf32>
  }
}
