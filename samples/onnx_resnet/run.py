"""An ONNX ResNet from file to C, called from Python and from a C program.

1. `make_model.py` writes resnet8.onnx (a ResNet-8 for 32x32 images);
2. `mlvm.compile("resnet8.onnx")` imports, compiles and loads it; its logits
   are compared with onnxruntime's on seeded random images;
3. `mlvm-aot compile resnet8.onnx -o resnet8.c` writes the C, which `main.c`
   (a static arena, no allocation) runs on one image from a file; its
   logits are compared with onnxruntime's too.

    python samples/onnx_resnet/run.py [OUT_DIR]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort

import mlvm
from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_model import resnet8  # noqa: E402

#: max |mlvm - onnxruntime| relative to max |onnxruntime| (the logits' scale):
#: both sum in float32, in different orders, and fold batch norm differently.
RTOL = 1e-4


def close(got: np.ndarray, want: np.ndarray) -> float:
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    assert err <= RTOL, f"relative error {err:.3g} > {RTOL}"
    return err


def from_python(model: Path, images: np.ndarray) -> float:
    m = mlvm.compile(model)
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    worst = 0.0
    for x in images:
        x = x[None]
        worst = max(worst, close(m.main(x), sess.run(None, {"input": x})[0]))
    return worst


def from_c(model: Path, image: np.ndarray, work: Path) -> tuple[float, str]:
    aot = Path(sys.executable).parent / "mlvm-aot"
    subprocess.run([str(aot), "compile", str(model), "-o", str(work / "resnet8.c")], check=True)
    exe = work / "resnet8"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(INCLUDE_DIR),
         "-I", str(work), str(HERE / "main.c"), str(work / "resnet8.c"),
         *map(str, runtime_sources()), "-lm", "-o", str(exe)],
        check=True,
    )
    (work / "image.f32").write_bytes(image.astype("<f4").tobytes())
    out = subprocess.run([str(exe), str(work / "image.f32")], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    logits = np.array([float(v) for v in out[:10]], np.float32)
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": image[None]})[0][0]
    err = close(logits, want)
    assert out[10] == f"class {int(np.argmax(want))}", out[10]
    return err, out[10]


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="resnet-"))
    work.mkdir(parents=True, exist_ok=True)
    model = work / "resnet8.onnx"
    model.write_bytes(resnet8().SerializeToString())
    images = np.random.default_rng(1).standard_normal((4, 3, 32, 32)).astype(np.float32)
    err_py = from_python(model, images)
    err_c, cls = from_c(model, images[0], work)
    print(f"Python: 4 images, max relative error vs onnxruntime {err_py:.2e}")
    print(f"C:      {cls}, max relative error vs onnxruntime {err_c:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
