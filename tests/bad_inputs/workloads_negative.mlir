// expected-error: 12:5: 'autotune.group' op workloads must be a list of lists of non-negative integers
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
    autotune.group @mm variants([@mm_0, @mm_1]) {policy = "explicit", workloads = [[-1]]}
    builtin.module {
      func.func @mm_0(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
      func.func @mm_1(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
    }
  }
  util.func public @main(%lhs: tensor<8x8xf32>, %rhs: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = flow.dispatch @mm_ex::@mm(%lhs, %rhs) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    util.return %0 : tensor<8x8xf32>
  }
}
