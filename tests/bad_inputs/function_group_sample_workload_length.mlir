// expected-error: 10:3: 'autotune.group' op sample workloads have 2 values but the uses of @f have 1
module {
  util.func private @f1(%x: tensor<?xf32>) -> tensor<?xf32> {
    util.return %x : tensor<?xf32>
  }
  util.func private @f2(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = util.optimization_barrier %x : tensor<?xf32>
    util.return %0 : tensor<?xf32>
  }
  autotune.group @f variants([@f1, @f2]) {policy = "explicit", workloads = [[4, 4]]}
  util.func public @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = util.call @f(%x) : (tensor<?xf32>) -> tensor<?xf32>
    util.return %0 : tensor<?xf32>
  }
}
