// A streaming model: each call takes 3 frames from the queue "frames",
// runs a small network on each (16 -> 8 -> 4, ReLU), pushes every result to
// the queue "results" and yields between frames, so that several streams
// (calls with their own instance, queues and arena) interleave on one
// thread. `mlvm.queue_pop` suspends the call while its queue is empty.
//
// Weights are seeded normals computed at compile time.

func.func @stream(%gain: tensor<f32>) -> tensor<4xf32> {
  %w1 = "mlvm.rng_normal"() <{seed = 1 : i64}> : () -> tensor<16x8xf32>
  %w2 = "mlvm.rng_normal"() <{seed = 2 : i64}> : () -> tensor<8x4xf32>
  %zero = "mlvm.constant"() <{value = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xf32>

  // frame 0
  %f0 = "mlvm.queue_pop"() <{queue = "frames"}> : () -> tensor<1x16xf32>
  %h0 = "mlvm.matmul"(%f0, %w1) : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %r0 = "mlvm.relu"(%h0) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %o0 = "mlvm.matmul"(%r0, %w2) : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %g0 = "mlvm.mul"(%o0, %gain) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %y0 = "mlvm.reshape"(%g0) : (tensor<1x4xf32>) -> tensor<4xf32>
  "mlvm.queue_push"(%y0) <{queue = "results"}> : (tensor<4xf32>) -> ()
  %s0 = "mlvm.add"(%zero, %y0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.yield"() : () -> ()

  // frame 1
  %f1 = "mlvm.queue_pop"() <{queue = "frames"}> : () -> tensor<1x16xf32>
  %h1 = "mlvm.matmul"(%f1, %w1) : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %r1 = "mlvm.relu"(%h1) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %o1 = "mlvm.matmul"(%r1, %w2) : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %g1 = "mlvm.mul"(%o1, %gain) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %y1 = "mlvm.reshape"(%g1) : (tensor<1x4xf32>) -> tensor<4xf32>
  "mlvm.queue_push"(%y1) <{queue = "results"}> : (tensor<4xf32>) -> ()
  %s1 = "mlvm.add"(%s0, %y1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.yield"() : () -> ()

  // frame 2
  %f2 = "mlvm.queue_pop"() <{queue = "frames"}> : () -> tensor<1x16xf32>
  %h2 = "mlvm.matmul"(%f2, %w1) : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %r2 = "mlvm.relu"(%h2) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %o2 = "mlvm.matmul"(%r2, %w2) : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %g2 = "mlvm.mul"(%o2, %gain) : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %y2 = "mlvm.reshape"(%g2) : (tensor<1x4xf32>) -> tensor<4xf32>
  "mlvm.queue_push"(%y2) <{queue = "results"}> : (tensor<4xf32>) -> ()
  %s2 = "mlvm.add"(%s1, %y2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

  // the sum of the call's results
  func.return %s2 : tensor<4xf32>
}
