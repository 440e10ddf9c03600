// expected-error: 12:50: 'autotune.group' op unknown group attribute 'polcy'; expected one of policy, choice, reference, expected, warmup, min_samples, max_samples, confidence, tolerance, tie_band, workloads, warm_start
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
    autotune.group @mm variants([@mm_0, @mm_1]) {polcy = "online"}
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
