"""Tensor-parallel inference of the digits MLP on 2 ranks in-process.

    python samples/data_parallel/tensor_parallel.py

The first layer is split by columns (each rank holds half of the hidden
units: its slice of w1 and b1), the second by rows (the matching half of
w2), so each rank computes partial logits from its hidden units and one
`mlvm.all_reduce` (sum) adds them: every rank ends with the logits one rank
computes with all the weights. The weights live in each rank's module
state. Prints the largest difference from the single-rank logits and
whether the predicted classes agree.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import mlvm
import mlvm.parallel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from step import mnist_sample  # noqa: E402

mnist = mnist_sample()

ROWS = 128

SOURCE = """\
"mlvm.global"() <{{sym_name = "w1", type = tensor<64x{h}xf32>}}> : () -> ()
"mlvm.global"() <{{sym_name = "b1", type = tensor<{h}xf32>}}> : () -> ()
"mlvm.global"() <{{sym_name = "w2", type = tensor<{h}x10xf32>}}> : () -> ()
"mlvm.global"() <{{sym_name = "b2", type = tensor<10xf32>}}> : () -> ()

// This rank's hidden units, then the logits of all of them.
func.func @logits(%x: tensor<{n}x64xf32>) -> tensor<{n}x10xf32> {{
  %w1 = "mlvm.global_load"() <{{global = @w1}}> : () -> tensor<64x{h}xf32>
  %b1 = "mlvm.global_load"() <{{global = @b1}}> : () -> tensor<{h}xf32>
  %w2 = "mlvm.global_load"() <{{global = @w2}}> : () -> tensor<{h}x10xf32>
  %b2 = "mlvm.global_load"() <{{global = @b2}}> : () -> tensor<10xf32>
  %xw = "mlvm.matmul"(%x, %w1) : (tensor<{n}x64xf32>, tensor<64x{h}xf32>) -> tensor<{n}x{h}xf32>
  %z = "mlvm.add"(%xw, %b1) : (tensor<{n}x{h}xf32>, tensor<{h}xf32>) -> tensor<{n}x{h}xf32>
  %a = "mlvm.relu"(%z) : (tensor<{n}x{h}xf32>) -> tensor<{n}x{h}xf32>
  %part = "mlvm.matmul"(%a, %w2) : (tensor<{n}x{h}xf32>, tensor<{h}x10xf32>) -> tensor<{n}x10xf32>
  %sum = "mlvm.all_reduce"(%part) <{{kind = "sum"}}> : (tensor<{n}x10xf32>) -> tensor<{n}x10xf32>
  %l = "mlvm.add"(%sum, %b2) : (tensor<{n}x10xf32>, tensor<10xf32>) -> tensor<{n}x10xf32>
  func.return %l : tensor<{n}x10xf32>
}}
"""


def run(ranks: int = 2, seed: int = 0) -> tuple[float, bool]:
    """(max |logits_parallel - logits_serial|, classes agree) on the test rows."""
    data = mnist.load_digits(seed)
    # Trained weights: 300 steps of the round-trip step from mnist_train.
    module = mnist.compile_module(seed)
    params, _ = mnist.run_steps(mnist.compiled_step(module), mnist.init_params(seed), data, 300, seed)
    w1, b1, w2, b2 = params
    hidden = w1.shape[1] // ranks
    x = np.zeros((ROWS, 64), np.float32)
    x[: min(ROWS, len(data.x_test))] = data.x_test[:ROWS]
    serial = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "tp.mlir"
        src.write_text(SOURCE.format(h=hidden, n=ROWS))
        with mlvm.parallel.Group(mlvm.compile(src), ranks) as group:
            for r, m in enumerate(group.modules):
                cols = slice(r * hidden, (r + 1) * hidden)
                m.state["w1"], m.state["b1"] = w1[:, cols], b1[cols]
                m.state["w2"], m.state["b2"] = w2[cols], b2
            outs = group.run("logits", [(x,)] * ranks)
    for o in outs[1:]:
        assert np.array_equal(o, outs[0])  # every rank has the same logits
    diff = float(np.max(np.abs(outs[0] - serial)))
    return diff, bool(np.array_equal(outs[0].argmax(1), serial.argmax(1)))


def main() -> int:
    diff, same = run()
    print(f"2 ranks, tensor-parallel: classes {'equal' if same else 'DIFFER'} to one rank's")
    print(f"max |logits_parallel - logits_serial| = {diff:.2e}")
    return 0 if same and diff <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
