// Forms a hand-written mirror read wrongly or dropped: tied results of functions and
// dispatches (also with another type), declarations with argument and result attributes,
// an export whose name differs from its kernel function (`@kernel_fn as("export_name")`), a dispatch of an executable defined elsewhere, a
// global whose initial value has another element type than it.
module {
  util.global private @table : tensor<4xf32> = dense<4> : tensor<4xi32>
  util.func private @import_fn(%arg0: tensor<4xf32> {iree.abi.name = "x"}) -> (tensor<4xf32> {iree.abi.name = "y"})
  flow.executable private @exe {
    flow.executable.export public @kernel_fn as("export_name") workgroups(%n: index) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice(%n)
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @kernel_fn(%n: index, %io: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<?xf32>>) {
        return
      }
    }
  }
  util.func public @in_place(%arg0: tensor<?xf32>, %n: index) -> %arg0 {
    %0 = flow.dispatch @exe::@export_name[%n](%n, %arg0) : (index, tensor<?xf32>{%n}) -> %arg0{%n}
    util.return %0 : tensor<?xf32>
  }
  util.func public @reinterpreted(%arg0: tensor<16xf32>) -> tensor<4x4xf32> {
    %c16 = arith.constant 16 : index
    %0 = flow.dispatch @elsewhere::@kernel[%c16](%arg0) : (tensor<16xf32>) -> %arg0 as tensor<4x4xf32>
    util.return %0 : tensor<4x4xf32>
  }
}
