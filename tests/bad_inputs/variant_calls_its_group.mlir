// expected-error: 3:8: 'util.call' op calls group @g, which its own variants reach (@g -> @a -> @g)
util.func private @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = util.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %r : tensor<4xf32>
}
util.func private @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  util.return %x : tensor<4xf32>
}
autotune.group @g variants([@a, @b])
util.func public @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = util.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %r : tensor<4xf32>
}
