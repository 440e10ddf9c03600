// expected-error: 9:7: 'autotune.group' op cannot be inside a kernel module; place it beside the exports of the executable
module {
  flow.executable private @e {
    flow.executable.export public @v0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      autotune.group @g variants([@v0])
      func.func @v0(%out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>) {
        return
      }
    }
  }
}
