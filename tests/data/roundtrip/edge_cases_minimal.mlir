// Small edge cases: named module with attributes, quoted symbol names, escaped strings, export without ordinal/count, empty initializer, zero-result funcs, unit attrs.
module @"edge-cases" attributes {autotune.version = 3 : i32, autotune.note = "tab\09quote\22 newline\0A", autotune.enabled, autotune.dims = array<i64: 1, 2, 3>} {
  util.global private @"weird.name-0" = 0 : i32
  hal.executable.source private @"exe.v1" <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "dir with spaces/k.ptx"}>]}>}> {
    hal.executable.export public @"kernel-0" layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>)
    hal.executable.export private @hidden ordinal(1) layout(#hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer, Indirect>]>)
  }
  util.initializer {
    util.return
  }
  util.func private @"autotune.variant-0"()
  util.func public @empty() {
    util.return
  }
  util.func public @call_quoted() -> i32 {
    util.call @"autotune.variant-0"() : () -> ()
    %0 = util.global.load @"weird.name-0" : i32
    util.return %0 : i32
  }
  util.func public @dispatch_quoted(%t: tensor<4xf32>) -> tensor<4xf32> {
    %c4 = arith.constant 4 : index
    %0 = flow.dispatch @"exe.v1"::@"kernel-0"[%c4](%t) : (tensor<4xf32>) -> tensor<4xf32>
    util.return %0 : tensor<4xf32>
  }
}
