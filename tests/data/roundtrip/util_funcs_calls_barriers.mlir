// util.func public definitions with arg/result attributes, private declarations, util.call, util.optimization_barrier with one and several operands.
module @funcs {
  util.func private @autotune.now_ns() -> i64
  util.func private @autotune.record(i64, i64, index)
  util.func private @autotune.sink(%arg0: tensor<8xf32>) -> tensor<8xf32>
  util.func private @helper(%x: i32, %y: i32) -> i32 {
    %0 = arith.muli %x, %y : i32
    %1 = arith.addi %0, %x : i32
    util.return %1 : i32
  }
  util.func public @entry(%arg0: tensor<8xf32> {iree.abi.name = "input"}, %arg1: i32 {iree.abi.name = "k"}, %arg2: index) -> (tensor<8xf32> {iree.abi.name = "output"}, i32) attributes {iree.abi.stub, autotune.entry = "main"} {
    %t0 = util.call @autotune.now_ns() : () -> i64
    %0 = util.optimization_barrier %arg0 : tensor<8xf32>
    %1 = util.call @autotune.sink(%0) : (tensor<8xf32>) -> tensor<8xf32>
    %2 = util.call @helper(%arg1, %arg1) : (i32, i32) -> i32
    %3:3 = util.optimization_barrier %1, %2, %arg2 : tensor<8xf32>, i32, index
    %t1 = util.call @autotune.now_ns() : () -> i64
    util.call @autotune.record(%t0, %t1, %3#2) : (i64, i64, index) -> ()
    util.return %3#0, %3#1 : tensor<8xf32>, i32
  }
  util.func public @no_args() {
    %c42 = arith.constant 42 : i32
    %0 = util.optimization_barrier %c42 : i32
    util.return
  }
  util.func private @multi_result(%a: index) -> (index, index, i1) {
    %c2 = arith.constant 2 : index
    %q = arith.divui %a, %c2 : index
    %r = arith.remui %a, %c2 : index
    %c0 = arith.constant 0 : index
    %even = arith.cmpi eq, %r, %c0 : index
    util.return %q, %r, %even : index, index, i1
  }
  util.func public @use_multi(%a: index) -> index {
    %0:3 = util.call @multi_result(%a) : (index) -> (index, index, i1)
    %1 = arith.select %0#2, %0#0, %0#1 : index
    util.return %1 : index
  }
}
