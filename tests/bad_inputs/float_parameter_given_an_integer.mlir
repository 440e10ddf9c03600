// expected-error: 12:50: 'autotune.group' op group attribute 'confidence' expects a float (e.g. 0.95), but 1 : i32 is an integer
module {
  flow.executable private @mm_ex {
    flow.executable.export public @mm_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @mm_1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @mm variants([@mm_0, @mm_1]) {confidence = 1 : i32}
    builtin.module {
      func.func @mm_0(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        %a = iree_tensor_ext.dispatch.tensor.load %lhs, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>> -> tensor<8x8xf32>
        iree_tensor_ext.dispatch.tensor.store %a, %out, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : tensor<8x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>
        return
      }
      func.func @mm_1(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        %b = iree_tensor_ext.dispatch.tensor.load %rhs, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>> -> tensor<8x8xf32>
        iree_tensor_ext.dispatch.tensor.store %b, %out, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : tensor<8x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>
        return
      }
    }
  }
  // Each kernel takes lhs, rhs and out; the dispatch passes only lhs (plus its result).
  util.func public @main(%lhs: tensor<8x8xf32>, %rhs: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = flow.dispatch @mm_ex::@mm(%lhs) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    util.return %0 : tensor<8x8xf32>
  }
}
