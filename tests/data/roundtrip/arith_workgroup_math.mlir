// Workgroup-count arithmetic in hal count regions and flow workgroups regions (ceildivui, divui, remui, muli, cmpi, select, index_cast) and host-side arith.constant of many types.
#layout = #hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
module {
  hal.executable.source private @tiled <{objects = #hal.executable.objects<{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{path = "tiled.ptx"}>]}>}> {
    hal.executable.export public @gemm ordinal(0) layout(#layout) count(%device: !hal.device, %m: index, %n: index, %k: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c4096 = arith.constant 4096 : index
      %tx = arith.ceildivui %n, %c128 : index
      %ty = arith.ceildivui %m, %c64 : index
      // Split-K when K is large and divisible.
      %big = arith.cmpi ugt, %k, %c4096 : index
      %rem = arith.remui %k, %c4096 : index
      %c0 = arith.constant 0 : index
      %div = arith.cmpi eq, %rem, %c0 : index
      %ksplit = arith.divui %k, %c4096 : index
      %tz0 = arith.select %div, %ksplit, %c1 : index
      %tz = arith.select %big, %tz0, %c1 : index
      hal.return %tx, %ty, %tz : index, index, index
    } <{workgroup_size = [128 : index, 2 : index, 1 : index], workgroup_local_memory = 32768 : index, subgroup_size = 32 : index}>
    hal.executable.export public @flat ordinal(1) layout(#layout) count(%device: !hal.device, %total: index) -> (index, index, index) {
      %c65535 = arith.constant 65535 : index
      %c1 = arith.constant 1 : index
      %c256 = arith.constant 256 : index
      %blocks = arith.ceildivui %total, %c256 : index
      %over = arith.cmpi ugt, %blocks, %c65535 : index
      %y = arith.ceildivui %blocks, %c65535 : index
      %x = arith.select %over, %c65535, %blocks : index
      %yy = arith.select %over, %y, %c1 : index
      hal.return %x, %yy, %c1 : index, index, index
    } <{workgroup_size = [256 : index, 1 : index, 1 : index]}>
  }
  flow.executable private @copy_ex {
    flow.executable.export public @copy workgroups(%arg0: index, %arg1: index) -> (index, index, index) {
      %c8 = arith.constant 8 : index
      %c1 = arith.constant 1 : index
      %x = arith.ceildivui %arg0, %c8 : index
      %y = arith.muli %arg1, %c1 : index
      flow.return %x, %y, %c1 : index, index, index
    }
    builtin.module {
      func.func @copy(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xi8>>, %m: index, %n: index, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x?xi8>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0, 0], sizes = [%m, %n], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<?x?xi8>>{%m, %n} -> tensor<?x?xi8>
        iree_tensor_ext.dispatch.tensor.store %0, %out, offsets = [0, 0], sizes = [%m, %n], strides = [1, 1] : tensor<?x?xi8> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<?x?xi8>>{%m, %n}
        return
      }
    }
  }
  util.func public @constants() -> (i1, i8, i16, i32, i64, index, f16, bf16, f32, f64) {
    %true = arith.constant true
    %i8 = arith.constant -128 : i8
    %i16 = arith.constant 32767 : i16
    %i32 = arith.constant -1 : i32
    %i64 = arith.constant 9223372036854775807 : i64
    %idx = arith.constant 0 : index
    %h = arith.constant 1.000000e+00 : f16
    %bf = arith.constant -2.500000e+00 : bf16
    %f = arith.constant 0x7FC00000 : f32
    %d = arith.constant 3.1415926535897931 : f64
    util.return %true, %i8, %i16, %i32, %i64, %idx, %h, %bf, %f, %d : i1, i8, i16, i32, i64, index, f16, bf16, f32, f64
  }
  util.func public @sizes(%m_i32: i32, %n_i64: i64) -> (index, index, i32) {
    %m = arith.index_cast %m_i32 : i32 to index
    %n = arith.index_cast %n_i64 : i64 to index
    %c3 = arith.constant 3 : index
    %mn = arith.muli %m, %n : index
    %q = arith.ceildivui %mn, %c3 : index
    %r = arith.remui %mn, %c3 : index
    %back = arith.index_cast %q : index to i32
    util.return %q, %r, %back : index, index, i32
  }
  util.func public @copy(%t: tensor<?x?xi8>, %m: index, %n: index) -> tensor<?x?xi8> {
    %0 = flow.dispatch @copy_ex::@copy[%m, %n](%t, %m, %n) : (tensor<?x?xi8>{%m, %n}, index, index) -> tensor<?x?xi8>{%m, %n}
    util.return %0 : tensor<?x?xi8>
  }
}
