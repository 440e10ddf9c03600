// expected-error: 19:8: unexpected end of input: unterminated region opened at {FILE}:13:20; 2 more open around it
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
    autotune.group @mm variants([@mm_0, @mm_1])
    builtin.module {
      func.func @mm_0(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
      func.func @mm_1(%lhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %rhs: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        return
      }
