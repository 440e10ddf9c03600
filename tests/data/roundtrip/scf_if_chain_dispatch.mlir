// scf.if chains yielding tensors to pick one of several PTX kernel variants (hal.executable.source exports) by a util.global selector; scf.if with no results and with several results.
#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "variants.ptx"}>]}>
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  util.global private mutable @selected = 0 : i32
  hal.executable.source private @variants <{objects = #objects}> {
    hal.executable.export public @v0 ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c64 = arith.constant 64 : index
      %x = arith.ceildivui %n, %c64 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [64 : index, 1 : index, 1 : index]}>
    hal.executable.export public @v1 ordinal(1) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c128 = arith.constant 128 : index
      %x = arith.ceildivui %n, %c128 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [128 : index, 1 : index, 1 : index]}>
    hal.executable.export public @v2 ordinal(2) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c256 = arith.constant 256 : index
      %x = arith.ceildivui %n, %c256 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index
    } <{workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 8192 : index}>
  }
  util.func public @run(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
    %n = arith.constant 4096 : index
    %n_i32 = arith.constant 4096 : i32
    %sel = util.global.load @selected : i32
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %is0 = arith.cmpi eq, %sel, %c0_i32 : i32
    %r = scf.if %is0 -> (tensor<4096xf32>) {
      %d = flow.dispatch @variants::@v0[%n](%n_i32, %a, %b) : (i32, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
      scf.yield %d : tensor<4096xf32>
    } else {
      %is1 = arith.cmpi eq, %sel, %c1_i32 : i32
      %r1 = scf.if %is1 -> (tensor<4096xf32>) {
        %d = flow.dispatch @variants::@v1[%n](%n_i32, %a, %b) : (i32, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
        scf.yield %d : tensor<4096xf32>
      } else {
        %d = flow.dispatch @variants::@v2[%n](%n_i32, %a, %b) : (i32, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
        scf.yield %d : tensor<4096xf32>
      }
      scf.yield %r1 : tensor<4096xf32>
    }
    // Bump the selector for the next call (no results).
    %c2_i32 = arith.constant 2 : i32
    %last = arith.cmpi uge, %sel, %c2_i32 : i32
    scf.if %last {
      util.global.store %c0_i32, @selected : i32
    } else {
      %next = arith.addi %sel, %c1_i32 : i32
      util.global.store %next, @selected : i32
    }
    util.return %r : tensor<4096xf32>
  }
  util.func public @pick_pair(%flag: i1, %x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, index) {
    %res:2 = scf.if %flag -> (tensor<16xf32>, index) {
      %c1 = arith.constant 1 : index
      scf.yield %x, %c1 : tensor<16xf32>, index
    } else {
      %c2 = arith.constant 2 : index
      scf.yield %y, %c2 : tensor<16xf32>, index
    }
    %only = scf.if %flag -> (tensor<16xf32>) {
      scf.yield %res#0 : tensor<16xf32>
    } else {
      %e = tensor.empty() : tensor<16xf32>
      scf.yield %e : tensor<16xf32>
    }
    util.return %only, %res#1 : tensor<16xf32>, index
  }
}
