// util.global variants (private/public, mutable, with and without initial values, attr dicts), util.initializer, util.global.load (incl. immutable) and util.global.store.
module @globals {
  // Scalars with initial values.
  util.global private mutable @iteration = 0 : i64
  util.global public @max_iterations = 100 : index
  util.global private @scale = 1.500000e+00 : f32
  util.global public mutable @threshold : f32 = 2.500000e-01 : f32
  util.global private @flag = true
  // Tensors.
  util.global private @weights = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  util.global private @splat = dense<0> : tensor<2x3xi32>
  util.global private mutable @state : tensor<4xf32>
  // No initial value, filled by the initializer.
  util.global private @device : !hal.device
  util.global private mutable @best_variant : index
  util.global private @uninit = #util.uninitialized : i32
  util.global private @tagged {autotune.role = "timer", autotune.id = 3 : i32} : i64
  util.initializer {
    %c0 = arith.constant 0 : index
    %dev = hal.devices.get %c0 : !hal.device
    util.global.store %dev, @device : !hal.device
    util.global.store %c0, @best_variant : index
    %w = util.global.load immutable @weights : tensor<4xf32>
    util.global.store %w, @state : tensor<4xf32>
    %t = arith.constant 7 : i64
    util.global.store %t, @tagged : i64
    util.return
  }
  util.initializer {
    %c1 = arith.constant 1 : i64
    util.global.store %c1, @iteration : i64
    util.return
  }
  util.func public @step() -> (i64, index) {
    %it = util.global.load @iteration : i64
    %c1 = arith.constant 1 : i64
    %next = arith.addi %it, %c1 : i64
    util.global.store %next, @iteration : i64
    %best = util.global.load @best_variant : index
    %max = util.global.load @max_iterations : index
    %it_idx = arith.index_cast %next : i64 to index
    %done = arith.cmpi uge, %it_idx, %max : index
    %sel = arith.select %done, %best, %it_idx : index
    util.global.store %sel, @best_variant : index
    util.return %next, %sel : i64, index
  }
}
