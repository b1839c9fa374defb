"""A small CNN for the 8x8 digits, trained in f32, quantized to int8 and run
by mlvm: from Python, and (with --m4) on an emulated Cortex-M4.

    python samples/int8/train.py [--epochs N] [--seed S] [--out DIR] [--m4]

1. trains conv(1->8, 3x3) relu, conv(8->16, 3x3, stride 2) relu, dense(256->10)
   in numpy on scikit-learn's digits (seeded split);
2. writes it as ONNX (f32.onnx) and quantizes it with onnxruntime's static
   quantizer (QDQ, per-channel int8 weights, uint8 activations) on 64
   seeded training images (int8.onnx);
3. compiles both with mlvm and reports test accuracy in f32 and int8 (the
   drop), and that mlvm's int8 logits equal onnxruntime's bit for bit;
4. with --m4: builds the int8 model for the Cortex-M4 (qemu mps2-an386)
   and checks its logits on test images equal the host build's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


# -- data and model -----------------------------------------------------------------
@dataclass
class Digits:
    x_train: np.ndarray  # [N, 1, 8, 8] float32 in [0, 1]
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits(seed: int) -> Digits:
    from sklearn.datasets import load_digits as sk_digits

    d = sk_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], d.target[order].astype(np.int64)
    cut = int(0.8 * len(x))
    return Digits(x[:cut], y[:cut], x[cut:], y[cut:])


def im2col(x: np.ndarray, k: int, stride: int, pad: int) -> tuple[np.ndarray, int, int]:
    """[N, C, H, W] -> [N, OH*OW, C*k*k] windows (zero padding)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    cols = np.empty((n, c, k, k, oh, ow), x.dtype)
    for ky in range(k):
        for kx in range(k):
            cols[:, :, ky, kx] = xp[:, :, ky: ky + stride * oh: stride, kx: kx + stride * ow: stride]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n, oh * ow, c * k * k), oh, ow


def col2im(cols: np.ndarray, shape: tuple[int, ...], k: int, stride: int, pad: int) -> np.ndarray:
    n, c, h, w = shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    g = cols.reshape(n, oh, ow, c, k, k).transpose(0, 3, 4, 5, 1, 2)
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), cols.dtype)
    for ky in range(k):
        for kx in range(k):
            xp[:, :, ky: ky + stride * oh: stride, kx: kx + stride * ow: stride] += g[:, :, ky, kx]
    return xp[:, :, pad: pad + h, pad: pad + w]


LAYERS = (("w1", 8, 1, 1), ("w2", 16, 8, 2))  # name, out channels, in channels, stride


def init_params(seed: int) -> dict[str, np.ndarray]:
    g = np.random.default_rng(seed)
    p: dict[str, np.ndarray] = {}
    for name, o, c, _ in LAYERS:
        p[name] = (g.standard_normal((o, c, 3, 3)) * np.sqrt(2.0 / (c * 9))).astype(np.float32)
        p["b" + name[1:]] = np.zeros(o, np.float32)
    p["wf"] = (g.standard_normal((16 * 4 * 4, 10)) * np.sqrt(1.0 / 256)).astype(np.float32)
    p["bf"] = np.zeros(10, np.float32)
    return p


def forward(p: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[tuple]]:
    cache = []
    h = x
    for name, o, _, stride in LAYERS:
        cols, oh, ow = im2col(h, 3, stride, 1)
        z = cols @ p[name].reshape(o, -1).T + p["b" + name[1:]]
        a = np.maximum(z, 0)
        cache.append((h.shape, cols, z))
        h = a.transpose(0, 2, 1).reshape(len(x), o, oh, ow)
    flat = h.reshape(len(x), -1)
    cache.append((flat,))
    return flat @ p["wf"] + p["bf"], cache


def train(d: Digits, epochs: int, seed: int) -> dict[str, np.ndarray]:
    p = init_params(seed)
    vel = {k: np.zeros_like(v) for k, v in p.items()}
    g = np.random.default_rng(seed + 1)
    lr, mu, batch = 0.05, 0.9, 32
    for _ in range(epochs):
        order = g.permutation(len(d.x_train))
        for s in range(0, len(order), batch):
            idx = order[s: s + batch]
            x, y = d.x_train[idx], d.y_train[idx]
            logits, cache = forward(p, x)
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            grad = e / e.sum(axis=1, keepdims=True)
            grad[np.arange(len(y)), y] -= 1
            grad /= len(y)
            (flat,) = cache[-1]
            grads = {"wf": flat.T @ grad, "bf": grad.sum(0)}
            dh = (grad @ p["wf"].T).reshape(len(x), 16, 4, 4)
            for (name, o, _, stride), (shape, cols, z) in zip(reversed(LAYERS), reversed(cache[:-1])):
                dz = dh.reshape(len(x), o, -1).transpose(0, 2, 1) * (z > 0)
                grads[name] = np.einsum("npo,npk->ok", dz, cols).reshape(p[name].shape)
                grads["b" + name[1:]] = dz.sum((0, 1))
                dh = col2im(dz @ p[name].reshape(o, -1), shape, 3, stride, 1)
            for k in p:
                vel[k] = mu * vel[k] - lr * grads[k].astype(np.float32)
                p[k] = (p[k] + vel[k]).astype(np.float32)
    return p


# -- ONNX, quantization, mlvm ------------------------------------------------------------
def to_onnx(p: dict[str, np.ndarray], path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]), n("Relu", ["c2"], ["r2"]),
        n("Flatten", ["r2"], ["f"]), n("MatMul", ["f", "wf"], ["m"]), n("Add", ["m", "bf"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in p.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def quantize(f32: Path, out: Path, d: Digits, seed: int) -> Path:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Calibration(CalibrationDataReader):
        def __init__(self) -> None:
            idx = np.random.default_rng(seed + 2).choice(len(d.x_train), 64, replace=False)
            self.it = iter([{"x": d.x_train[i: i + 1]} for i in idx])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    from mlvm.frontend.onnx.ort_int8 import onnxruntime_saturates

    # weights within [-64, 64] where onnxruntime's own u8 x s8 products would saturate
    # (x86-64 without VNNI), so that its int8 results stay exact to compare
    quantize_static(str(f32), str(out), Calibration(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    reduce_range=onnxruntime_saturates())
    return out


def logits(module: object, x: np.ndarray) -> np.ndarray:
    return np.concatenate([module.main(x[i: i + 1]) for i in range(len(x))])  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="folder for the .onnx files (default: a temporary one)")
    ap.add_argument("--m4", action="store_true", help="also run the int8 model on an emulated Cortex-M4")
    ap.add_argument("--count", action="store_true",
                    help="with --m4: exact instructions per inference of the f32 and int8 models")
    args = ap.parse_args(argv)

    import onnxruntime as ort

    import mlvm

    out = args.out or Path(tempfile.mkdtemp(prefix="mlvm-int8-"))
    out.mkdir(parents=True, exist_ok=True)
    d = load_digits(args.seed)
    p = train(d, args.epochs, args.seed)
    f32 = to_onnx(p, out / "f32.onnx")
    q = quantize(f32, out / "int8.onnx", d, args.seed)
    mf, mq = mlvm.compile(f32), mlvm.compile(q)
    lf, lq = logits(mf, d.x_test), logits(mq, d.x_test)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(q), so, providers=["CPUExecutionProvider"])
    lo = np.concatenate([sess.run(None, {"x": d.x_test[i: i + 1]})[0] for i in range(len(d.x_test))])
    acc_f = float(np.mean(lf.argmax(1) == d.y_test))
    acc_q = float(np.mean(lq.argmax(1) == d.y_test))
    same = bool(np.array_equal(lq, lo))
    print(f"test accuracy: f32 {acc_f:.4f}, int8 {acc_q:.4f} (drop {acc_f - acc_q:+.4f}), "
          f"{len(d.y_test)} images")
    print(f"int8 logits equal onnxruntime's bit for bit: {same}")
    result = {"acc_f32": acc_f, "acc_int8": acc_q, "same_as_onnxruntime": float(same)}
    if args.m4:
        sys.path.insert(0, str(ROOT))
        from embedded.cortex_m import harness

        from mlvm.cli import aot_main

        c_file = out / "digits_int8.c"
        if aot_main(["compile", str(q), "-o", str(c_file)]) != 0:
            raise SystemExit("mlvm-aot compile failed")
        info = mq.functions["main"]
        ok = True
        for i in range(4):
            x = d.x_test[i: i + 1]
            res = harness.run(c_file, info, [x], "m4")
            ok &= bool(np.array_equal(res.outputs[0], mq.main(x)))
        print(f"Cortex-M4 (qemu mps2-an386): logits equal the host build's on 4 images: {ok}; "
              f"stack {res.stack_bytes} B, flash {res.text_bytes + res.data_bytes} B, "
              f"RAM {res.data_bytes + res.bss_bytes} B")
        result["m4_same"] = float(ok)
        if args.count:
            macs = 8 * 1 * 9 * 64 + 16 * 8 * 9 * 16 + 256 * 10
            for name, path, mod in (("f32", f32, mf), ("int8", q, mq)):
                c = out / f"digits_{name}_count.c"
                if aot_main(["compile", str(path), "-o", str(c)]) != 0:
                    raise SystemExit("mlvm-aot compile failed")
                r = harness.run(c, mod.functions["main"], [d.x_test[:1]], "m4", count=True)
                assert r.instructions is not None
                print(f"Cortex-M4 {name}: {r.instructions} instructions per inference, "
                      f"{r.instructions / macs:.2f} per multiply-add ({macs}), stack {r.stack_bytes} B, "
                      f"text {r.text_bytes} B")
                result[f"m4_{name}_instructions"] = float(r.instructions)
    return result


if __name__ == "__main__":
    main()
