"""Write scikit-learn's 8x8 digits to a binary file for samples/c_eager/train.c.

    python samples/c_eager/export_digits.py OUT.bin [--seed S]

The split is the one samples/mnist_train uses: 20 % held out, stratified,
`random_state=seed`; pixels scaled to [0, 1]. Layout, little-endian:

    char magic[4] = "MLVD"; uint32 version = 1;
    uint32 n_train, n_test, features, classes;
    float32 x_train[n_train][features]; int32 labels_train[n_train];
    float32 x_test[n_test][features];   int32 labels_test[n_test];
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path

import numpy as np

MAGIC = b"MLVD"
VERSION = 1
CLASSES = 10


def export(path: str | Path, seed: int = 0) -> tuple[int, int]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x = (data.data / 16.0).astype(np.float32)
    labels = data.target.astype(np.int32)
    x_tr, x_te, l_tr, l_te = train_test_split(
        x, labels, test_size=0.2, random_state=seed, stratify=labels
    )
    le = "<"
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack(le + "5I", VERSION, len(x_tr), len(x_te), x.shape[1], CLASSES))
        for a, dt in ((x_tr, "f4"), (l_tr, "i4"), (x_te, "f4"), (l_te, "i4")):
            f.write(np.ascontiguousarray(a, dtype=le + dt).tobytes())
    return len(x_tr), len(x_te)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    n_train, n_test = export(args.out, args.seed)
    print(f"{args.out}: {n_train} training and {n_test} held-out digits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
