// Host code written with func.func / func.call / func.return (declarations, private helpers, arg attributes) dispatching a flow.executable.
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  flow.executable private @relu_ex {
    flow.executable.export public @relu workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @relu(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x32xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x32xf32>>) {
        %zero = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0, 0], sizes = [32, 32], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x32xf32>> -> tensor<32x32xf32>
        %1 = tensor.empty() : tensor<32x32xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<32x32xf32>) outs(%1 : tensor<32x32xf32>) {
        ^bb0(%a: f32, %o: f32):
          %3 = arith.maximumf %a, %zero : f32
          linalg.yield %3 : f32
        } -> tensor<32x32xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0, 0], sizes = [32, 32], strides = [1, 1] : tensor<32x32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x32xf32>>
        return
      }
    }
  }
  func.func private @external_timer() -> i64
  func.func private @external_log(i64, index) attributes {llvm.emit_c_interface}
  func.func private @twice(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %0 = flow.dispatch @relu_ex::@relu(%x) : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %1 = flow.dispatch @relu_ex::@relu(%0) : (tensor<32x32xf32>) -> tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }
  func.func @main(%arg0: tensor<32x32xf32> {iree.abi.name = "x"}, %iters: index) -> (tensor<32x32xf32>, i64) {
    %t0 = func.call @external_timer() : () -> i64
    %r = call @twice(%arg0) : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %t1 = func.call @external_timer() : () -> i64
    %sum = arith.addi %t0, %t1 : i64
    func.call @external_log(%sum, %iters) : (i64, index) -> ()
    func.return %r, %sum : tensor<32x32xf32>, i64
  }
}
