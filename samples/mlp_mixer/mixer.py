"""MLP-Mixer for 32x32x3 images: the model in the mlvm dialect, its weights,
and the same model in plain numpy.

    python samples/mlp_mixer/mixer.py [OUT_DIR] [--seed N]

writes `mixer.npz` (the weights) and `mixer_b1.mlir`, `mixer_b8.mlir` (the
model for batch 1 and 8) into OUT_DIR (default: this directory).

Architecture: 4x4 patches (64 tokens of 48 values), a linear embedding to
128 channels, 4 mixer blocks, each

    h = h + token_mlp(layer_norm(h))     token MLP: 64 -> 64 -> 64 over the tokens
    h = h + channel_mlp(layer_norm(h))   channel MLP: 128 -> 512 -> 128 over the channels

with GELU (tanh) inside the MLPs and LayerNorm eps 1e-6, then a last
LayerNorm, the mean over tokens and a linear head to 10 classes.

Layout. The compiled model keeps activations token-major, as a
(tokens * batch, channels) matrix whose rows are (token, image) pairs:
LayerNorm and the channel MLP work on rows and do not care about their
order, and the token MLP becomes one rank-2 product over the whole batch,
W (64 x 64 tokens) @ h viewed as (64 tokens, batch * 128), with the bias and
the GELU in its epilogue. The patch extraction is a single transpose that
puts the token dims first. `forward` below is the textbook batch-major
numpy model; the tests check that the two agree.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

SAMPLE_DIR = Path(__file__).resolve().parent

IMAGE = 32
CHANNELS_IN = 3
PATCH = 4
GRID = IMAGE // PATCH  # 8
TOKENS = GRID * GRID  # 64
PATCH_DIM = PATCH * PATCH * CHANNELS_IN  # 48
HIDDEN = 128
TOKEN_MLP = 64
CHANNEL_MLP = 512
DEPTH = 4
CLASSES = 10
EPS = 1e-6
DEFAULT_SEED = 0
BATCHES = (1, 8)


# --------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------


def make_params(seed: int = DEFAULT_SEED) -> dict[str, np.ndarray]:
    """The weights, a pure function of `seed` (LeCun-normal matrices, small
    random biases, LayerNorm scales near 1)."""
    g = np.random.default_rng(seed)

    def dense(fan_in: int, shape: tuple[int, ...]) -> np.ndarray:
        return (g.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    def small(shape: tuple[int, ...], scale: float = 0.05) -> np.ndarray:
        return (g.standard_normal(shape) * scale).astype(np.float32)

    p: dict[str, np.ndarray] = {
        "embed_w": dense(PATCH_DIM, (PATCH_DIM, HIDDEN)),
        "embed_b": small((HIDDEN,)),
    }
    for i in range(DEPTH):
        p[f"b{i}_ln1_g"] = (1 + small((HIDDEN,), 0.1)).astype(np.float32)
        p[f"b{i}_ln1_b"] = small((HIDDEN,), 0.1)
        # Token MLP weights as left factors: (out tokens, in tokens).
        p[f"b{i}_tok_w1"] = dense(TOKENS, (TOKEN_MLP, TOKENS))
        p[f"b{i}_tok_b1"] = small((TOKEN_MLP, 1))
        p[f"b{i}_tok_w2"] = dense(TOKEN_MLP, (TOKENS, TOKEN_MLP))
        p[f"b{i}_tok_b2"] = small((TOKENS, 1))
        p[f"b{i}_ln2_g"] = (1 + small((HIDDEN,), 0.1)).astype(np.float32)
        p[f"b{i}_ln2_b"] = small((HIDDEN,), 0.1)
        p[f"b{i}_ch_w1"] = dense(HIDDEN, (HIDDEN, CHANNEL_MLP))
        p[f"b{i}_ch_b1"] = small((CHANNEL_MLP,))
        p[f"b{i}_ch_w2"] = dense(CHANNEL_MLP, (CHANNEL_MLP, HIDDEN))
        p[f"b{i}_ch_b2"] = small((HIDDEN,))
    p["ln_g"] = (1 + small((HIDDEN,), 0.1)).astype(np.float32)
    p["ln_b"] = small((HIDDEN,), 0.1)
    p["head_w"] = dense(HIDDEN, (HIDDEN, CLASSES))
    p["head_b"] = small((CLASSES,))
    return p


# --------------------------------------------------------------------------
# numpy model (batch-major, the textbook form)
# --------------------------------------------------------------------------


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    c = np.float32(np.sqrt(2.0 / np.pi))
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(EPS)) * g + b


def patches(x: np.ndarray) -> np.ndarray:
    """(B, 32, 32, 3) images -> (B, 64, 48) patches, row-major over the grid."""
    b = x.shape[0]
    p = x.reshape(b, GRID, PATCH, GRID, PATCH, CHANNELS_IN).transpose(0, 1, 3, 2, 4, 5)
    return p.reshape(b, TOKENS, PATCH_DIM)


def forward(p: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Logits (B, 10) of images x (B, 32, 32, 3), float32 numpy."""
    h = patches(x) @ p["embed_w"] + p["embed_b"]  # (B, 64, 128)
    for i in range(DEPTH):
        y = layer_norm(h, p[f"b{i}_ln1_g"], p[f"b{i}_ln1_b"]).transpose(0, 2, 1)  # (B, 128, 64)
        y = gelu_tanh(y @ p[f"b{i}_tok_w1"].T + p[f"b{i}_tok_b1"][:, 0])
        y = y @ p[f"b{i}_tok_w2"].T + p[f"b{i}_tok_b2"][:, 0]
        h = h + y.transpose(0, 2, 1)
        y = layer_norm(h, p[f"b{i}_ln2_g"], p[f"b{i}_ln2_b"])
        y = gelu_tanh(y @ p[f"b{i}_ch_w1"] + p[f"b{i}_ch_b1"]) @ p[f"b{i}_ch_w2"] + p[f"b{i}_ch_b2"]
        h = h + y
    h = layer_norm(h, p["ln_g"], p["ln_b"]).mean(axis=1)
    return (h @ p["head_w"] + p["head_b"]).astype(np.float32)


# --------------------------------------------------------------------------
# The model in the mlvm dialect (generic form), token-major
# --------------------------------------------------------------------------


def t(*shape: int) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def mlir_text(batch: int) -> str:
    """The model for `batch` images as MLIR text (generic form)."""
    b = batch
    rows = TOKENS * b
    lines: list[str] = []
    n = [0]

    def op(text: str) -> str:
        name = f"%v{n[0]}"
        n[0] += 1
        lines.append(f"  {name} = {text}")
        return name

    def param(name: str, *shape: int) -> str:
        return op(f'"mlvm.param"() <{{name = "{name}"}}> : () -> {t(*shape)}')

    def matmul(a: str, ta: tuple[int, ...], w: str, tw: tuple[int, ...]) -> str:
        return op(f'"mlvm.matmul"({a}, {w}) : ({t(*ta)}, {t(*tw)}) -> {t(ta[0], tw[1])}')

    def binary(kind: str, a: str, ta: tuple[int, ...], c: str, tc: tuple[int, ...]) -> str:
        return op(f'"mlvm.{kind}"({a}, {c}) : ({t(*ta)}, {t(*tc)}) -> {t(*ta)}')

    def gelu(a: str, ta: tuple[int, ...]) -> str:
        return op(f'"mlvm.gelu"({a}) <{{approximate = "tanh"}}> : ({t(*ta)}) -> {t(*ta)}')

    def reshape(a: str, ta: tuple[int, ...], tb: tuple[int, ...]) -> str:
        return op(f'"mlvm.reshape"({a}) : ({t(*ta)}) -> {t(*tb)}')

    def layer_norm_op(a: str, g: str, bb: str) -> str:
        return op(
            f'"mlvm.layer_norm"({a}, {g}, {bb}) <{{axes = array<i64: -1>, eps = {EPS:.1e} : f32}}> : '
            f"({t(rows, HIDDEN)}, {t(HIDDEN)}, {t(HIDDEN)}) -> {t(rows, HIDDEN)}"
        )

    H = (rows, HIDDEN)
    # Patches, token-major: (gy, gx, image, py, px, c) rows of 48 values.
    x6 = reshape("%x", (b, IMAGE, IMAGE, CHANNELS_IN), (b, GRID, PATCH, GRID, PATCH, CHANNELS_IN))
    xt = op(
        f'"mlvm.transpose"({x6}) <{{perm = array<i64: 1, 3, 0, 2, 4, 5>}}> : '
        f"({t(b, GRID, PATCH, GRID, PATCH, CHANNELS_IN)}) -> {t(GRID, GRID, b, PATCH, PATCH, CHANNELS_IN)}"
    )
    xp = reshape(xt, (GRID, GRID, b, PATCH, PATCH, CHANNELS_IN), (rows, PATCH_DIM))
    h = matmul(xp, (rows, PATCH_DIM), param("embed_w", PATCH_DIM, HIDDEN), (PATCH_DIM, HIDDEN))
    h = binary("add", h, H, param("embed_b", HIDDEN), (HIDDEN,))
    for i in range(DEPTH):
        # Token mixing: one product over the whole batch, (64 x 64) @ (64, b * 128).
        y = layer_norm_op(h, param(f"b{i}_ln1_g", HIDDEN), param(f"b{i}_ln1_b", HIDDEN))
        T = (TOKENS, b * HIDDEN)
        y = reshape(y, H, T)
        y = matmul(param(f"b{i}_tok_w1", TOKEN_MLP, TOKENS), (TOKEN_MLP, TOKENS), y, T)
        y = gelu(binary("add", y, (TOKEN_MLP, b * HIDDEN), param(f"b{i}_tok_b1", TOKEN_MLP, 1),
                        (TOKEN_MLP, 1)), (TOKEN_MLP, b * HIDDEN))
        y = matmul(param(f"b{i}_tok_w2", TOKENS, TOKEN_MLP), (TOKENS, TOKEN_MLP), y,
                   (TOKEN_MLP, b * HIDDEN))
        y = binary("add", y, T, param(f"b{i}_tok_b2", TOKENS, 1), (TOKENS, 1))
        h = binary("add", reshape(h, H, T), T, y, T)
        h = reshape(h, T, H)
        # Channel mixing on rows.
        y = layer_norm_op(h, param(f"b{i}_ln2_g", HIDDEN), param(f"b{i}_ln2_b", HIDDEN))
        C = (rows, CHANNEL_MLP)
        y = matmul(y, H, param(f"b{i}_ch_w1", HIDDEN, CHANNEL_MLP), (HIDDEN, CHANNEL_MLP))
        y = gelu(binary("add", y, C, param(f"b{i}_ch_b1", CHANNEL_MLP), (CHANNEL_MLP,)), C)
        y = matmul(y, C, param(f"b{i}_ch_w2", CHANNEL_MLP, HIDDEN), (CHANNEL_MLP, HIDDEN))
        y = binary("add", y, H, param(f"b{i}_ch_b2", HIDDEN), (HIDDEN,))
        h = binary("add", h, H, y, H)
    y = layer_norm_op(h, param("ln_g", HIDDEN), param("ln_b", HIDDEN))
    y = reshape(y, H, (TOKENS, b, HIDDEN))
    pooled = op(
        f'"mlvm.reduce"({y}) <{{kind = "mean", axes = array<i64: 0>}}> : '
        f"({t(TOKENS, b, HIDDEN)}) -> {t(b, HIDDEN)}"
    )
    logits = matmul(pooled, (b, HIDDEN), param("head_w", HIDDEN, CLASSES), (HIDDEN, CLASSES))
    logits = binary("add", logits, (b, CLASSES), param("head_b", CLASSES), (CLASSES,))
    header = (
        f"// MLP-Mixer, batch {b}: {IMAGE}x{IMAGE}x{CHANNELS_IN} images, {PATCH}x{PATCH} patches "
        f"({TOKENS} tokens), hidden {HIDDEN},\n"
        f"// token MLP {TOKEN_MLP}, channel MLP {CHANNEL_MLP}, depth {DEPTH}, {CLASSES} classes.\n"
        "// Written by samples/mlp_mixer/mixer.py; weights in mixer.npz (same script).\n"
        f"//   mlvm-aot build mixer_b{b}.mlir -o mixer_b{b}.so --params mixer.npz\n\n"
    )
    return (
        header
        + f"func.func @main(%x: {t(b, IMAGE, IMAGE, CHANNELS_IN)}) -> {t(b, CLASSES)} {{\n"
        + "\n".join(lines)
        + f"\n  func.return {logits} : {t(b, CLASSES)}\n}}\n"
    )


def write(out_dir: str | Path, seed: int = DEFAULT_SEED,
          batches: Sequence[int] = BATCHES) -> tuple[Path, list[Path]]:
    """Write mixer.npz and mixer_b<B>.mlir into out_dir; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    npz = out / "mixer.npz"
    np.savez(npz, **make_params(seed))  # type: ignore[arg-type]
    mlirs = []
    for b in batches:
        path = out / f"mixer_b{b}.mlir"
        path.write_text(mlir_text(b))
        mlirs.append(path)
    return npz, mlirs


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", default=str(SAMPLE_DIR))
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = ap.parse_args(argv)
    npz, mlirs = write(args.out_dir, args.seed)
    for p in (npz, *mlirs):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
