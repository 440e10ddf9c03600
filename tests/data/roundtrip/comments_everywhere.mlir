// Comments in many positions: file header, between aliases, trailing on ops, inside regions, inside kernel bodies, inside multi-line attributes; punctuation in comments.
//
// Comment with tricky characters: "quotes" {braces} <angles> %ssa @sym #alias !type ^bb0 // nested
#layout = #hal.pipeline.layout<constants = 1, bindings = [
  // input buffer
  #hal.pipeline.binding<storage_buffer, ReadOnly>,
  // output buffer
  #hal.pipeline.binding<storage_buffer>
]>
// The CUDA target.
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb"> // trailing comment after alias
#map = affine_map<(d0) -> (d0)>

module attributes {
  // device list
  hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]
} {
  // A PTX kernel.
  hal.executable.source private @ptx <{objects = #hal.executable.objects<{#cuda = [#hal.executable.object<{path = "c.ptx"}>]}>}> {
    hal.executable.export public @k ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
      // one workgroup per 32 elements
      %c32 = arith.constant 32 : index // tile
      %x = arith.ceildivui %n, %c32 : index
      %c1 = arith.constant 1 : index
      hal.return %x, %c1, %c1 : index, index, index // done
    } <{workgroup_size = [32 : index, 1 : index, 1 : index]}> // property dict
  }
  flow.executable private @flow_exe {
    // export comment
    flow.executable.export public @sq workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice() // from slice
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      // kernel module comment
      func.func @sq(%in: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8xf32>>, %out: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8xf32>>) {
        // load
        %0 = iree_tensor_ext.dispatch.tensor.load %in, offsets = [0], sizes = [8], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8xf32>> -> tensor<8xf32>
        %1 = tensor.empty() : tensor<8xf32>
        %2 = linalg.generic {
          // maps
          indexing_maps = [#map, #map],
          iterator_types = ["parallel"]
        } ins(%0 : tensor<8xf32>) outs(%1 : tensor<8xf32>) {
        ^bb0(%a: f32, %o: f32): // block args
          // square it
          %3 = arith.mulf %a, %a : f32
          linalg.yield %3 : f32
        } -> tensor<8xf32>
        // store
        iree_tensor_ext.dispatch.tensor.store %2, %out, offsets = [0], sizes = [8], strides = [1] : tensor<8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8xf32>>
        return // end of kernel
      }
    }
  }
  // Host entry point.
  util.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {
    // first the flow kernel
    %0 = flow.dispatch @flow_exe::@sq(%a) : (tensor<8xf32>) -> tensor<8xf32>
    %c8 = arith.constant 8 : index
    %c8_i32 = arith.constant 8 : i32
    // then the PTX kernel
    %1 = flow.dispatch @ptx::@k[%c8](%c8_i32, %0) : (i32, tensor<8xf32>) -> tensor<8xf32>
    util.return %1 : tensor<8xf32> // return
  }
  // end of module
}
// Trailing comment at end of file without a newline.