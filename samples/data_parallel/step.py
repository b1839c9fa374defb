"""The data-parallel training step of samples/data_parallel, as mlvm text.

The model and the hand-written backward pass are samples/mnist_train's
(a 64-32-10 ReLU MLP). Each rank computes the gradients of its share of
the global batch, the ranks average them with `mlvm.all_reduce` (mean),
and every rank applies the same SGD update to its own copy of the weights,
kept in the module state: after any number of steps all ranks hold the
same weights, those one rank gets from the whole batch.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

FEATURES, HIDDEN, CLASSES = 64, 32, 10


@cache
def mnist_sample() -> ModuleType:
    """samples/mnist_train/train.py (data, init, numpy steps), loaded by path:
    this folder's script is named train.py too."""
    name = "mnist_train_sample"
    path = Path(__file__).resolve().parent.parent / "mnist_train" / "train.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

STEP = """\
"mlvm.global"() <{{sym_name = "w1", type = tensor<64x32xf32>, init = "w1"}}> : () -> ()
"mlvm.global"() <{{sym_name = "b1", type = tensor<32xf32>, init = "b1"}}> : () -> ()
"mlvm.global"() <{{sym_name = "w2", type = tensor<32x10xf32>, init = "w2"}}> : () -> ()
"mlvm.global"() <{{sym_name = "b2", type = tensor<10xf32>, init = "b2"}}> : () -> ()

// One SGD step on this rank's {b} rows of the global batch; the loss of
// the whole batch.
func.func @step(%x: tensor<{b}x64xf32>, %y: tensor<{b}x10xf32>, %lr: tensor<f32>) -> tensor<f32> {{
  %zero = "mlvm.constant"() <{{value = dense<0.0> : tensor<f32>}}> : () -> tensor<f32>
  %rows = "mlvm.constant"() <{{value = dense<{b}.0> : tensor<f32>}}> : () -> tensor<f32>
  %w1 = "mlvm.global_load"() <{{global = @w1}}> : () -> tensor<64x32xf32>
  %b1 = "mlvm.global_load"() <{{global = @b1}}> : () -> tensor<32xf32>
  %w2 = "mlvm.global_load"() <{{global = @w2}}> : () -> tensor<32x10xf32>
  %b2 = "mlvm.global_load"() <{{global = @b2}}> : () -> tensor<10xf32>
  %xw1 = "mlvm.matmul"(%x, %w1) : (tensor<{b}x64xf32>, tensor<64x32xf32>) -> tensor<{b}x32xf32>
  %z1 = "mlvm.add"(%xw1, %b1) : (tensor<{b}x32xf32>, tensor<32xf32>) -> tensor<{b}x32xf32>
  %h1 = "mlvm.relu"(%z1) : (tensor<{b}x32xf32>) -> tensor<{b}x32xf32>
  %hw2 = "mlvm.matmul"(%h1, %w2) : (tensor<{b}x32xf32>, tensor<32x10xf32>) -> tensor<{b}x10xf32>
  %logits = "mlvm.add"(%hw2, %b2) : (tensor<{b}x10xf32>, tensor<10xf32>) -> tensor<{b}x10xf32>
  %rl, %g = "mlvm.softmax_xent"(%y, %logits) : (tensor<{b}x10xf32>, tensor<{b}x10xf32>) -> (tensor<{b}xf32>, tensor<{b}x10xf32>)
  %local_loss = "mlvm.reduce"(%rl) <{{kind = "mean", axes = array<i64: 0>, keepdims = false}}> : (tensor<{b}xf32>) -> tensor<f32>
  %dlogits = "mlvm.div"(%g, %rows) : (tensor<{b}x10xf32>, tensor<f32>) -> tensor<{b}x10xf32>
  %dw2_l = "mlvm.matmul"(%h1, %dlogits) <{{transpose_lhs = true}}> : (tensor<{b}x32xf32>, tensor<{b}x10xf32>) -> tensor<32x10xf32>
  %db2_l = "mlvm.reduce"(%dlogits) <{{kind = "sum", axes = array<i64: 0>, keepdims = false}}> : (tensor<{b}x10xf32>) -> tensor<10xf32>
  %dh1 = "mlvm.matmul"(%dlogits, %w2) <{{transpose_rhs = true}}> : (tensor<{b}x10xf32>, tensor<32x10xf32>) -> tensor<{b}x32xf32>
  %mask = "mlvm.cmpl"(%z1, %zero) : (tensor<{b}x32xf32>, tensor<f32>) -> tensor<{b}x32xf32>
  %dz1 = "mlvm.mul"(%dh1, %mask) : (tensor<{b}x32xf32>, tensor<{b}x32xf32>) -> tensor<{b}x32xf32>
  %dw1_l = "mlvm.matmul"(%x, %dz1) <{{transpose_lhs = true}}> : (tensor<{b}x64xf32>, tensor<{b}x32xf32>) -> tensor<64x32xf32>
  %db1_l = "mlvm.reduce"(%dz1) <{{kind = "sum", axes = array<i64: 0>, keepdims = false}}> : (tensor<{b}x32xf32>) -> tensor<32xf32>
  // The mean over the ranks of each rank's mean gradient: the whole batch's.
  %dw1 = "mlvm.all_reduce"(%dw1_l) <{{kind = "mean"}}> : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %db1 = "mlvm.all_reduce"(%db1_l) <{{kind = "mean"}}> : (tensor<32xf32>) -> tensor<32xf32>
  %dw2 = "mlvm.all_reduce"(%dw2_l) <{{kind = "mean"}}> : (tensor<32x10xf32>) -> tensor<32x10xf32>
  %db2 = "mlvm.all_reduce"(%db2_l) <{{kind = "mean"}}> : (tensor<10xf32>) -> tensor<10xf32>
  %loss = "mlvm.all_reduce"(%local_loss) <{{kind = "mean"}}> : (tensor<f32>) -> tensor<f32>
  %sw1 = "mlvm.mul"(%dw1, %lr) : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  %nw1 = "mlvm.sub"(%w1, %sw1) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  "mlvm.global_store"(%nw1) <{{global = @w1}}> : (tensor<64x32xf32>) -> ()
  %sb1 = "mlvm.mul"(%db1, %lr) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %nb1 = "mlvm.sub"(%b1, %sb1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  "mlvm.global_store"(%nb1) <{{global = @b1}}> : (tensor<32xf32>) -> ()
  %sw2 = "mlvm.mul"(%dw2, %lr) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  %nw2 = "mlvm.sub"(%w2, %sw2) : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  "mlvm.global_store"(%nw2) <{{global = @w2}}> : (tensor<32x10xf32>) -> ()
  %sb2 = "mlvm.mul"(%db2, %lr) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
  %nb2 = "mlvm.sub"(%b2, %sb2) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  "mlvm.global_store"(%nb2) <{{global = @b2}}> : (tensor<10xf32>) -> ()
  func.return %loss : tensor<f32>
}}
"""


def step_source(local_batch: int) -> str:
    """The module for ranks that each take `local_batch` rows of a step."""
    if local_batch < 1:
        raise ValueError(f"a rank needs at least one row, got {local_batch}")
    return STEP.format(b=local_batch)
