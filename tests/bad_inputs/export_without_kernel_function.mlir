// expected-error: 8:5: 'flow.executable.export' op runs kernel function @v1, which the executable's module does not define
module {
  flow.executable private @e {
    flow.executable.export public @v0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @v1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @g variants([@v0, @v1])
    builtin.module {
      func.func @v0(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>) {
        return
      }
    }
  }
  util.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = flow.dispatch @e::@g(%a) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %r : tensor<4xf32>
  }
}
