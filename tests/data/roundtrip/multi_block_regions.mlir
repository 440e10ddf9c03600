// Regions with more than one block: branches in functions, initializers and a flow workgroups region
// (IREE wants one block in a hal count region).
module {
  util.global private mutable @counter : i32
  util.initializer {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    cf.cond_br %true, ^store(%c0 : i32), ^done
  ^store(%v: i32):
    util.global.store %v, @counter : i32
    cf.br ^done
  ^done:
    util.return
  }
  hal.executable.source private @exe {
    hal.executable.export public @k layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>) count(%device: !hal.device, %n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %n, %c1, %c1 : index, index, index
    }
  }
  flow.executable private @fexe {
    flow.executable.export public @f workgroups(%n: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      cf.br ^end(%n : index)
    ^end(%x: index):
      flow.return %x, %c1, %c1 : index, index, index
    }
  }
  util.func public @select(%a: i32, %b: i32, %c: i1) -> i32 {
    cf.cond_br %c, ^left, ^right(%b : i32)
  ^left:
    cf.br ^right(%a : i32)
  ^right(%r: i32):
    util.return %r : i32
  }
}
