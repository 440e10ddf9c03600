// expected-error: 28:10: error: 'flow.dispatch' op dispatch of group @copy has result #0 of type tensor<512xf32>, but variant @copy_0's kernel @copy_0 stores tensor<1024xf32> there (!iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xf32>>)
module {
  flow.executable private @copy_ex {
    flow.executable.export public @copy_0 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    flow.executable.export public @copy_1 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    autotune.group @copy variants([@copy_0, @copy_1]) {policy = "explicit"}
    builtin.module {
      func.func @copy_0(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xf32>>) {
        %a = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [1024], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>> -> tensor<1024xf32>
        iree_tensor_ext.dispatch.tensor.store %a, %out, offsets = [0], sizes = [1024], strides = [1] : tensor<1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xf32>>
        return
      }
      func.func @copy_1(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xf32>>) {
        %a = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [1024], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<1024xf32>> -> tensor<1024xf32>
        iree_tensor_ext.dispatch.tensor.store %a, %out, offsets = [0], sizes = [1024], strides = [1] : tensor<1024xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<1024xf32>>
        return
      }
    }
  }
  // The kernels store 1024 elements; the dispatch's result holds 512.
  util.func public @main(%in: tensor<1024xf32>) -> tensor<512xf32> {
    %0 = flow.dispatch @copy_ex::@copy(%in) : (tensor<1024xf32>) -> tensor<512xf32>
    util.return %0 : tensor<512xf32>
  }
}
