// hal.devices.get, hal.fence.create, hal.tensor.barrier (one and several tensors), hal.fence.await with one and several fences, cached device global.
#cuda = #hal.executable.target<"cuda", "cuda-nvptx-fb">
module attributes {hal.device.targets = [#hal.device.target<"cuda", [#cuda]> : !hal.device]} {
  util.global private @device : !hal.device
  util.initializer {
    %c0 = arith.constant 0 : index
    %d = hal.devices.get %c0 : !hal.device
    util.global.store %d, @device : !hal.device
    util.return
  }
  util.func public @sync_one(%t: tensor<128xf32>) -> tensor<128xf32> {
    %dev = util.global.load @device : !hal.device
    %fence = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    %ready = hal.tensor.barrier join(%t : tensor<128xf32>) => %fence : !hal.fence
    %timeout = arith.constant -1 : i32
    %status = hal.fence.await until([%fence]) timeout_millis(%timeout) flags("None") : i32
    util.return %ready : tensor<128xf32>
  }
  util.func public @sync_many(%a: tensor<4x4xf32>, %b: tensor<16xi32>, %timeout_ms: i32) -> (tensor<4x4xf32>, tensor<16xi32>, i32) {
    %c0 = arith.constant 0 : index
    %dev = hal.devices.get %c0 : !hal.device
    %f0 = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    %f1 = hal.fence.create device(%dev : !hal.device) flags("None") : !hal.fence
    %r:2 = hal.tensor.barrier join(%a, %b : tensor<4x4xf32>, tensor<16xi32>) => %f0 : !hal.fence
    %x = util.optimization_barrier %r#0 : tensor<4x4xf32>
    %y = hal.tensor.barrier join(%x : tensor<4x4xf32>) => %f1 : !hal.fence
    %status = hal.fence.await until([%f0, %f1]) timeout_millis(%timeout_ms) flags("None") : i32
    util.return %y, %r#1, %status : tensor<4x4xf32>, tensor<16xi32>, i32
  }
}
