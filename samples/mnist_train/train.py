"""Train a 64-32-10 ReLU MLP on scikit-learn's 8x8 digits with compiled SGD.

    python samples/mnist_train/train.py [--steps N] [--seed S] [--log-every K]

`train_step.mlir` holds the whole training step (forward, hand-written
backward, update) twice. `@sgd_step` keeps the weights and the momentum
velocities in the module (module state, `mlvm.global`): this script feeds it
an epoch's batches per call (`Function.scan`: the steps run in C, one loss
back per step), and `@classify` predicts with the trained weights. `@train_step` / `@predict` are the same model without
state, the parameters sent in and returned on every call (plain SGD); the
script times both. `numpy_step` / `numpy_momentum_step` are the steps in
plain numpy, the oracles the compiled steps are checked against.

The digits ship with scikit-learn (1797 images, 64 pixels with values 0..16),
so nothing is downloaded. Pixels are scaled to [0, 1].
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import mlvm

SAMPLE_DIR = Path(__file__).resolve().parent
MLIR = SAMPLE_DIR / "train_step.mlir"

# Shapes fixed by train_step.mlir.
FEATURES = 64
HIDDEN = 32
CLASSES = 10
BATCH = 32
#: Rows of one @predict call; longer inputs are evaluated in chunks.
PREDICT_ROWS = 128
#: The learning rate baked into @train_step (%lr); numpy_step uses the same.
LEARNING_RATE = np.float32(0.5)
#: @sgd_step's hyper-parameters: lr * 1 / (1 - momentum) = @train_step's rate.
MOMENTUM_LR = np.float32(0.05)
MOMENTUM = np.float32(0.9)
#: The module's globals: the parameters (initialised from the archive's
#: arrays of the same names) and their velocities (zeros).
PARAM_NAMES = ("w1", "b1", "w2", "b2")
VELOCITY_NAMES = tuple(f"v_{n}" for n in PARAM_NAMES)

#: 40 epochs of the 1437 training images (44 full batches each).
DEFAULT_STEPS = 1760
DEFAULT_SEED = 0

#: (w1 64x32, b1 32, w2 32x10, b2 10), the argument order of the IR functions.
Params = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: One SGD step: (params, x, one-hot y) -> (new params, mean loss).
StepFn = Callable[[Params, np.ndarray, np.ndarray], tuple[Params, float]]


@dataclass(frozen=True)
class Digits:
    """The digits, split once: features in [0, 1] (float32) and class labels."""

    x_train: np.ndarray
    labels_train: np.ndarray
    x_test: np.ndarray
    labels_test: np.ndarray

    @property
    def y_train(self) -> np.ndarray:
        """One-hot training labels (float32), as softmax_xent takes them."""
        return one_hot(self.labels_train)


def one_hot(labels: np.ndarray) -> np.ndarray:
    return np.eye(CLASSES, dtype=np.float32)[labels]


def load_digits(seed: int = DEFAULT_SEED, test_fraction: float = 0.2) -> Digits:
    """The bundled 8x8 digits, scaled to [0, 1], split stratified by `seed`."""
    from sklearn.datasets import load_digits as sk_load_digits
    from sklearn.model_selection import train_test_split

    data = sk_load_digits()
    x = (data.data / 16.0).astype(np.float32)
    labels = data.target.astype(np.int64)
    x_tr, x_te, l_tr, l_te = train_test_split(
        x, labels, test_size=test_fraction, random_state=seed, stratify=labels
    )
    return Digits(
        np.ascontiguousarray(x_tr), l_tr, np.ascontiguousarray(x_te), l_te
    )


def init_params(seed: int = DEFAULT_SEED) -> Params:
    """He-normal weights (std sqrt(2 / fan_in)) and zero biases, float32."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((FEATURES, HIDDEN)) * np.sqrt(2.0 / FEATURES)
    w2 = rng.standard_normal((HIDDEN, CLASSES)) * np.sqrt(2.0 / HIDDEN)
    return (
        w1.astype(np.float32),
        np.zeros(HIDDEN, np.float32),
        w2.astype(np.float32),
        np.zeros(CLASSES, np.float32),
    )


def epochs(data: Digits, seed: int = DEFAULT_SEED) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Endless epochs, each its (x, one-hot y) batches stacked: arrays of
    [steps, BATCH, FEATURES] and [steps, BATCH, CLASSES]. A fresh seeded
    shuffle per epoch; the last incomplete batch is dropped (static shapes).
    """
    rng = np.random.default_rng(seed)
    y = data.y_train
    n = len(data.x_train)
    steps = n // BATCH
    while True:
        idx = rng.permutation(n)[: steps * BATCH]
        # Gathered copies: every batch is a C-contiguous slice (np.take
        # gathers rows in half the time of fancy indexing).
        yield (np.take(data.x_train, idx, axis=0).reshape(steps, BATCH, FEATURES),
               np.take(y, idx, axis=0).reshape(steps, BATCH, CLASSES))


def batches(data: Digits, seed: int = DEFAULT_SEED) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The batches of `epochs`, one (x, one-hot y) at a time."""
    for xs, ys in epochs(data, seed):
        yield from zip(xs, ys)


# --------------------------------------------------------------------------
# The step in plain numpy
# --------------------------------------------------------------------------


def numpy_grads(params: Params, x: np.ndarray, y: np.ndarray) -> tuple[Params, float]:
    """The gradients of the mean loss (dw1, db1, dw2, db2) and the loss, in
    plain float32 numpy, operation for operation as train_step.mlir."""
    w1, b1, w2, b2 = params
    # Forward.
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, np.float32(0))
    logits = h1 @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    row_loss = -(y * (shifted - np.log(s))).sum(axis=1)
    loss = row_loss.mean(dtype=np.float32)
    # Backward of the mean loss.
    dlogits = (e / s - y) / np.float32(BATCH)
    dw2 = h1.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh1 = dlogits @ w2.T
    dz1 = dh1 * (z1 > 0).astype(np.float32)
    dw1 = x.T @ dz1
    db1 = dz1.sum(axis=0)
    return (dw1, db1, dw2, db2), float(loss)


def numpy_step(params: Params, x: np.ndarray, y: np.ndarray) -> tuple[Params, float]:
    """@train_step in plain float32 numpy: plain SGD."""
    grads, loss = numpy_grads(params, x, y)
    new = [(p - LEARNING_RATE * g).astype(np.float32) for p, g in zip(params, grads)]
    return (new[0], new[1], new[2], new[3]), loss


def numpy_momentum_step(
    params: Params, velocities: Params, x: np.ndarray, y: np.ndarray,
    lr: np.float32 = MOMENTUM_LR, mu: np.float32 = MOMENTUM,
) -> tuple[Params, Params, float]:
    """@sgd_step in numpy: (new params, new velocities, loss)."""
    grads, loss = numpy_grads(params, x, y)
    vel = [(v * mu + g).astype(np.float32) for v, g in zip(velocities, grads)]
    new = [(p - v * lr).astype(np.float32) for p, v in zip(params, vel)]
    return (new[0], new[1], new[2], new[3]), (vel[0], vel[1], vel[2], vel[3]), loss


def numpy_predict(params: Params, x: np.ndarray) -> np.ndarray:
    """@predict in numpy, for any number of rows."""
    w1, b1, w2, b2 = params
    h1 = np.maximum(x @ w1 + b1, np.float32(0))
    return np.argmax(h1 @ w2 + b2, axis=1).astype(np.int32)


# --------------------------------------------------------------------------
# The compiled step
# --------------------------------------------------------------------------


def init_archive(seed: int = DEFAULT_SEED) -> dict[str, np.ndarray]:
    """The parameter archive the module's weights start from."""
    return dict(zip(PARAM_NAMES, init_params(seed)))


def compile_module(seed: int = DEFAULT_SEED) -> mlvm.Module:
    """train_step.mlir built (or taken from mlvm's cache) and loaded, its
    state holding `init_params(seed)`."""
    return mlvm.compile(MLIR, params=init_archive(seed))


def set_params(module: mlvm.Module, params: Params) -> None:
    """Puts `params` into the module's state and zeroes the velocities."""
    for name, p in zip(PARAM_NAMES, params):
        module.state[name] = p
    for name in VELOCITY_NAMES:
        module.state[name] = np.zeros(module.state.specs[name].shape, np.float32)


def get_params(module: mlvm.Module) -> Params:
    w1, b1, w2, b2 = (module.state[n] for n in PARAM_NAMES)
    return w1, b1, w2, b2


def state_losses(
    module: mlvm.Module, data: Digits, steps: int, seed: int = DEFAULT_SEED,
    lr: np.float32 = MOMENTUM_LR, mu: np.float32 = MOMENTUM,
    log: Callable[[int, float], None] | None = None,
    per_call: bool = False,
) -> list[float]:
    """`steps` steps of @sgd_step from the module's current state; the losses.

    An epoch's steps are one `scan` call (the loop runs in C); with
    `per_call`, one Python call per step. Same batches, same losses.
    """
    lr_a, mu_a = np.array(lr, np.float32), np.array(mu, np.float32)
    step = module.sgd_step
    losses: list[float] = []
    if per_call:
        stream = batches(data, seed)
        for _ in range(steps):
            x, y = next(stream)
            losses.append(float(step(x, y, lr_a, mu_a)))
    else:
        for xs, ys in epochs(data, seed):
            if len(losses) == steps:
                break
            take = min(len(xs), steps - len(losses))
            losses.extend(step.scan(xs[:take], ys[:take], lr_a, mu_a).tolist())
    if log is not None:
        for i, loss in enumerate(losses):
            log(i, loss)
    return losses


def classify(module: mlvm.Module, x: np.ndarray) -> np.ndarray:
    """compiled_predict with @classify: the module's own weights."""
    return _in_chunks(lambda chunk: module.classify(chunk), x)


def compiled_step(module: mlvm.Module) -> StepFn:
    """The module's @train_step as a `StepFn`."""

    def step(params: Params, x: np.ndarray, y: np.ndarray) -> tuple[Params, float]:
        w1, b1, w2, b2, loss = module.train_step(*params, x, y)
        return (w1, b1, w2, b2), float(loss)

    return step


def compiled_predict(module: mlvm.Module, params: Params, x: np.ndarray) -> np.ndarray:
    """Classes of all rows of `x` through @predict, PREDICT_ROWS at a time.

    @predict has a static shape, so the rows go in chunks of PREDICT_ROWS;
    the last chunk is padded with zero rows whose predictions are dropped.
    This works for a test split of any size (360 rows here: 3 calls).
    """
    return _in_chunks(lambda chunk: module.predict(*params, chunk), x)


def _in_chunks(predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    out: list[np.ndarray] = []
    for start in range(0, len(x), PREDICT_ROWS):
        chunk = x[start : start + PREDICT_ROWS]
        rows = len(chunk)
        padded = np.zeros((PREDICT_ROWS, FEATURES), np.float32)
        padded[:rows] = chunk
        out.append(predict(padded)[:rows])
    return np.concatenate(out) if out else np.zeros(0, np.int32)


# --------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------


def run_steps(
    step: StepFn, params: Params, data: Digits, steps: int, seed: int = DEFAULT_SEED,
    log: Callable[[int, float], None] | None = None,
) -> tuple[Params, list[float]]:
    """`steps` SGD steps from `params` on the seeded batch stream."""
    losses: list[float] = []
    stream = batches(data, seed)
    for i in range(steps):
        x, y = next(stream)
        params, loss = step(params, x, y)
        losses.append(loss)
        if log is not None:
            log(i, loss)
    return params, losses


def train(
    steps: int = DEFAULT_STEPS,
    *,
    seed: int = DEFAULT_SEED,
    module: mlvm.Module | None = None,
    log: Callable[[int, float], None] | None = None,
    round_trip: bool = False,
) -> tuple[list[float], float]:
    """Train from a seeded init; (losses, test accuracy).

    By default with @sgd_step (weights and momentum in the module); with
    `round_trip`, with @train_step (plain SGD, parameters through numpy).
    `module` is a loaded train_step.mlir (compiled here when omitted); `log`
    is called with (step index, loss) after every step.
    """
    module = module or compile_module(seed)
    data = load_digits(seed)
    if round_trip:
        params, losses = run_steps(
            compiled_step(module), init_params(seed), data, steps, seed, log
        )
        predicted = compiled_predict(module, params, data.x_test)
    else:
        set_params(module, init_params(seed))
        losses = state_losses(module, data, steps, seed, log=log)
        predicted = classify(module, data.x_test)
    accuracy = float(np.mean(predicted == data.labels_test))
    return losses, accuracy


def steps_per_second(
    module: mlvm.Module, steps: int = 400, seed: int = DEFAULT_SEED
) -> tuple[float, float, float]:
    """Steps per second of the same update (plain SGD: @sgd_step with
    momentum 0) on the same batches, measured alternately: parameters
    round-tripped through numpy (@train_step), state in the module with one
    call per step, and state in the module with one call per epoch."""
    data = load_digits(seed)
    best = [0.0, 0.0, 0.0]
    for _ in range(3):
        t = [time.perf_counter()]
        run_steps(compiled_step(module), init_params(seed), data, steps, seed)
        t.append(time.perf_counter())
        for per_call in (True, False):
            set_params(module, init_params(seed))
            state_losses(module, data, steps, seed, lr=LEARNING_RATE, mu=np.float32(0), per_call=per_call)
            t.append(time.perf_counter())
        best = [max(b, steps / (t1 - t0)) for b, t0, t1 in zip(best, t, t[1:])]
    return best[0], best[1], best[2]


def compare_with_numpy(
    module: mlvm.Module, steps: int = 10, seed: int = DEFAULT_SEED
) -> tuple[list[float], list[float], float]:
    """Run the compiled and the numpy step side by side from the same params
    and batches: (compiled losses, numpy losses, max |param difference| at the end).
    """
    data = load_digits(seed)
    start = init_params(seed)
    p_c, l_c = run_steps(compiled_step(module), start, data, steps, seed)
    p_n, l_n = run_steps(numpy_step, start, data, steps, seed)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(p_c, p_n))
    return l_c, l_n, diff


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="SGD steps")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="split, init and shuffle seed")
    ap.add_argument("--log-every", type=int, default=220, help="print the loss every K steps")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    module = compile_module(args.seed)
    print(f"compiled {MLIR.name}: {sorted(module.functions)} ({time.perf_counter() - t0:.1f} s)")

    l_c, l_n, p_diff = compare_with_numpy(module, 10, args.seed)
    loss_diff = max(abs(a - b) for a, b in zip(l_c, l_n))
    print(
        f"numpy check, first 10 steps: max |loss diff| {loss_diff:.1e}, "
        f"max |param diff| {p_diff:.1e}"
    )
    data = load_digits(args.seed)
    set_params(module, init_params(args.seed))
    l_s = state_losses(module, data, 10, args.seed, lr=LEARNING_RATE, mu=np.float32(0))
    print(
        "state vs round trip (momentum 0), first 10 steps: max |loss diff| "
        f"{max(abs(a - b) for a, b in zip(l_s, l_c)):.1e}"
    )
    rt, call, scan = steps_per_second(module)
    print(
        f"steps/s at batch {BATCH}: round trip {rt:.0f}; state in the module: a call per step "
        f"{call:.0f} ({call / rt:.1f}x), a call per epoch {scan:.0f} ({scan / rt:.1f}x)"
    )

    # Single-batch losses are noisy: print the mean over each window of steps.
    window: list[float] = []

    def log(i: int, loss: float) -> None:
        window.append(loss)
        if (i + 1) % args.log_every == 0 or i + 1 == args.steps:
            print(f"  steps {i + 2 - len(window):5d}-{i + 1:<5d} mean loss {np.mean(window):.4f}")
            window.clear()

    t0 = time.perf_counter()
    _, accuracy = train(args.steps, seed=args.seed, module=module, log=log)
    seconds = time.perf_counter() - t0
    print(
        f"trained {args.steps} steps of batch {BATCH} (momentum {MOMENTUM:g}, lr {MOMENTUM_LR:g}) "
        f"in {seconds:.2f} s; test accuracy {accuracy:.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
