// RUN: not mlvm-opt %s -p 'mlvm-canonicalize{fold_limit=-1}' 2>&1 | filecheck %s --check-prefix=FOLD
// RUN: not mlvm-opt %s -p 'mlvm-plan-memory{alignment=0}' 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not mlvm-opt %s -p mlvm-no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not mlvm-opt %s -p 'mlvm-bucket-collectives{max_bytes=-1}' 2>&1 | filecheck %s --check-prefix=BUCKET
// RUN: not mlvm-opt %s -p 'mlvm-fuse-gelu{x=1}' 2>&1 | filecheck %s --check-prefix=GELU
// RUN: not mlvm-opt %s -p 'mlvm-sink-constants{x=1}' 2>&1 | filecheck %s --check-prefix=SINK

// Bad pass options and unknown passes: one line, exit code 1.
// FOLD: mlvm-opt: error: mlvm-canonicalize: fold_limit -1 must not be negative
// ALIGN: mlvm-opt: error: mlvm-plan-memory: alignment 0 is not a power of two
// UNKNOWN: mlvm-opt: error: {{.*}}mlvm-no-such-pass
// UNKNOWN-NOT: Traceback
// BUCKET: mlvm-opt: error: mlvm-bucket-collectives: max_bytes -1 must not be negative
// GELU: mlvm-opt: error: {{.*}}["x"] not found{{.*}}
// GELU-NOT: Traceback
// SINK: mlvm-opt: error: {{.*}}["x"] not found{{.*}}
// SINK-NOT: Traceback
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlvm.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
