// iree-opt printed form: shorthand objects with several objects per target, device target with config dict, count with several workloads, hex dense data object.
#executable_target_cuda_nvptx_fb = #hal.executable.target<"cuda", "cuda-nvptx-fb", {iree.gpu.target = "sm_80"}>
#pipeline_layout = #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>, #hal.pipeline.binding<storage_buffer>]>
#pipeline_layout1 = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>
#device_target_cuda = #hal.device.target<"cuda", {legacy_sync}, [#executable_target_cuda_nvptx_fb]> : !hal.device
module attributes {hal.device.targets = [#device_target_cuda]} {
  hal.executable.source public @paths <objects = <{#executable_target_cuda_nvptx_fb = [#hal.executable.object<{path = "a.ptx"}>, #hal.executable.object<{path = "b.ptx"}>]}>> {
    hal.executable.export public @reduce ordinal(0) layout(#pipeline_layout) count(%arg0: !hal.device, %arg1: index, %arg2: index) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %0 = arith.muli %arg1, %arg2 : index
      %1 = arith.ceildivui %0, %c4 : index
      hal.return %1, %c1, %c1 : index, index, index
    } <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = 4096>
    hal.executable.export public @copy ordinal(1) layout(#pipeline_layout1) <subgroup_size = 32>
  }
  hal.executable.source private @hexdata <objects = <{#executable_target_cuda_nvptx_fb = [#hal.executable.object<{path = "blob.ptx", data = dense<"0x2F2F0A2E76657273696F6E20372E300A"> : vector<16xi8>}>]}>> {
    hal.executable.export public @blob ordinal(0) layout(#pipeline_layout1) count(%arg0: !hal.device) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %c1, %c1, %c1 : index, index, index
    } <workgroup_size = [1 : index, 1 : index, 1 : index]>
  }
}

