"""Data-parallel training of the digits MLP on 1, 2 and 4 ranks in-process.

    python samples/data_parallel/train.py [--steps N] [--batch B] [--ranks 1,2,4]
    mpirun -n 2 python samples/data_parallel/train.py --mpi   # a process per rank

Every rank is an instance of the same compiled step (step.py) on its own
thread; each takes B / ranks rows of every global batch, the gradients are
averaged with an all-reduce, and each rank updates its own weights (module
state). The serial run is one rank on the whole batch with the same seeds;
the last line compares the weights:

    max |w_parallel - w_serial| = X
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

import mlvm
import mlvm.parallel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from step import mnist_sample, step_source  # noqa: E402

mnist = mnist_sample()

NAMES = ("w1", "b1", "w2", "b2")


def build(local_batch: int, seed: int, work: Path, comm: str = "shm") -> mlvm.Module:
    src = work / f"step_{local_batch}.mlir"
    src.write_text(step_source(local_batch))
    return mlvm.compile(src, params=dict(zip(NAMES, mnist.init_params(seed))),
                        options=mlvm.CompileOptions(comm=comm))


def batches(batch: int, steps: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """`steps` global batches: a seeded shuffle per epoch, the tail dropped."""
    data = mnist.load_digits(seed)
    rng = np.random.default_rng(seed)
    n = len(data.x_train)
    done = 0
    while done < steps:
        order = rng.permutation(n)
        for start in range(0, n - batch + 1, batch):
            if done == steps:
                return
            idx = order[start : start + batch]
            yield data.x_train[idx], data.y_train[idx]
            done += 1


def _split(ranks: int, batch: int) -> int:
    if batch % ranks:
        raise ValueError(f"the batch ({batch}) must split evenly over {ranks} ranks")
    return batch // ranks


def train(ranks: int, steps: int, batch: int, seed: int, work: Path) -> tuple[list[np.ndarray], list[float], float]:
    """(rank 0's weights, losses, seconds) of `steps` steps on `ranks` ranks
    in this process."""
    local = _split(ranks, batch)
    lr = np.array(mnist.LEARNING_RATE, np.float32)
    losses: list[float] = []
    with mlvm.parallel.Group(build(local, seed, work), ranks) as group:
        t0 = time.perf_counter()
        for x, y in batches(batch, steps, seed):
            inputs = [(x[r * local : (r + 1) * local], y[r * local : (r + 1) * local], lr)
                      for r in range(ranks)]
            losses.append(float(group.run("step", inputs)[0]))
        seconds = time.perf_counter() - t0
        weights = [group.modules[0].state[k] for k in NAMES]
        for m in group.modules[1:]:  # every rank holds the same weights
            assert all(np.array_equal(m.state[k], w) for k, w in zip(NAMES, weights))
    return weights, losses, seconds


def train_mpi(steps: int, batch: int, seed: int, work: Path) -> tuple[int, int, list[np.ndarray], float]:
    """This process as one rank of MPI_COMM_WORLD: (rank, size, weights, seconds)."""
    # The world's size decides the module's shapes, so it is read before MPI
    # starts: from the launcher's environment (Open MPI, or MPICH's PMI).
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE") or 1)
    local = _split(size, batch)
    module = build(local, seed, work, comm="mpi")
    rank, size = mlvm.parallel.mpi_world(module)
    lr = np.array(mnist.LEARNING_RATE, np.float32)
    t0 = time.perf_counter()
    for x, y in batches(batch, steps, seed):
        module.step(x[rank * local : (rank + 1) * local], y[rank * local : (rank + 1) * local], lr)
    return rank, size, [module.state[k] for k in NAMES], time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32, help="global batch")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mpi", action="store_true", help="under mpirun: this process is one rank")
    args = ap.parse_args(argv)
    worst = 0.0
    if args.mpi:
        with tempfile.TemporaryDirectory() as tmp:
            rank, size, w, t = train_mpi(args.steps, args.batch, args.seed, Path(tmp))
            if rank != 0:
                return 0
            serial, _, _ = train(1, args.steps, args.batch, args.seed, Path(tmp))
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w, serial))
        print(f"{size} MPI ranks, {args.batch // size} rows each: {args.steps / t:.0f} steps/s")
        print(f"max |w_parallel - w_serial| = {diff:.2e}")
        return 0 if diff <= 1e-5 else 1
    with tempfile.TemporaryDirectory() as tmp:
        serial, serial_losses, t1 = train(1, args.steps, args.batch, args.seed, Path(tmp))
        print(f"1 rank, batch {args.batch}: {args.steps / t1:.0f} steps/s, last loss {serial_losses[-1]:.4f}")
        for ranks in (int(r) for r in args.ranks.split(",")):
            if ranks == 1:
                continue
            w, losses, t = train(ranks, args.steps, args.batch, args.seed, Path(tmp))
            diff = max(float(np.max(np.abs(a - b))) for a, b in zip(w, serial))
            worst = max(worst, diff)
            print(f"{ranks} ranks, {args.batch // ranks} rows each: {args.steps / t:.0f} steps/s "
                  f"({t1 / t:.2f}x one rank), last loss {losses[-1]:.4f}, "
                  f"max |w - w_serial| {diff:.2e}")
    print(f"max |w_parallel - w_serial| = {worst:.2e}")
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
