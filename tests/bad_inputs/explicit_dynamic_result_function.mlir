// expected-error: 12:10: 'util.call' op cannot tune function group @f on synthetic inputs: its results have dynamic shapes
module {
  util.func private @f1(%x: tensor<?xf32>) -> tensor<?xf32> {
    util.return %x : tensor<?xf32>
  }
  util.func private @f2(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = util.optimization_barrier %x : tensor<?xf32>
    util.return %0 : tensor<?xf32>
  }
  autotune.group @f variants([@f1, @f2]) {policy = "explicit", workloads = [[16]]}
  util.func public @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = util.call @f(%x) : (tensor<?xf32>) -> tensor<?xf32>
    util.return %0 : tensor<?xf32>
  }
}
