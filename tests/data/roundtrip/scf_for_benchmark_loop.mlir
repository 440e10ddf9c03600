// Benchmark loop: scf.for with and without iter_args around flow.dispatch to a PTX hal.executable.source export, timing via util.call, optimization barriers.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module @bench attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  hal.executable.source private @kernels <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "scale.ptx"}>]}>}> {
    hal.executable.export public @scale ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c128 = arith.constant 128 : index
      %x = arith.ceildivui %n, %c128 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
  }
  util.func private @autotune.now_ns() -> i64
  util.func public @bench(%input: tensor<?xf32>, %n: index, %iters: index) -> (tensor<?xf32>, i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n_i32 = arith.index_cast %n : index to i32
    // Warmup without loop-carried values.
    scf.for %i = %c0 to %c1 step %c1 {
      %w = flow.dispatch @kernels::@scale[%n](%n_i32, %input) : (i32, tensor<?xf32>{%n}) -> tensor<?xf32>{%n}
      %w_keep = util.optimization_barrier %w : tensor<?xf32>
    }
    %t0 = util.call @autotune.now_ns() : () -> i64
    %res = scf.for %i = %c0 to %iters step %c1 iter_args(%acc = %input) -> (tensor<?xf32>) {
      %r = flow.dispatch @kernels::@scale[%n](%n_i32, %acc) : (i32, tensor<?xf32>{%n}) -> tensor<?xf32>{%n}
      %r_keep = util.optimization_barrier %r : tensor<?xf32>
      scf.yield %r_keep : tensor<?xf32>
    }
    %t1 = util.call @autotune.now_ns() : () -> i64
    %t_sum = arith.addi %t1, %t0 : i64
    %out, %time = util.optimization_barrier %res, %t_sum : tensor<?xf32>, i64
    util.return %out, %time : tensor<?xf32>, i64
  }
  util.func public @bench_loop_index(%input: tensor<64xf32>, %iters: index) -> (tensor<64xf32>, index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c64_i32 = arith.constant 64 : i32
    %r:2 = scf.for %i = %c0 to %iters step %c1 iter_args(%acc = %input, %count = %c0) -> (tensor<64xf32>, index) {
      %d = flow.dispatch @kernels::@scale[%c64](%c64_i32, %acc) : (i32, tensor<64xf32>) -> tensor<64xf32>
      %next = arith.addi %count, %c1 : index
      scf.yield %d, %next : tensor<64xf32>, index
    }
    util.return %r#0, %r#1 : tensor<64xf32>, index
  }
}
