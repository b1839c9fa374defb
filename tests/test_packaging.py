"""`pip install .` gives a working package: the wheel holds the runtime's C
sources and headers and the templates that the compiler reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_has_runtime_sources_and_templates(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True,
    )
    assert res.returncode == 0, res.stderr
    (wheel,) = tmp_path.glob("mlvm-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    src = ROOT / "mlvm"
    wanted = [p.relative_to(ROOT).as_posix() for p in (
        *src.glob("runtime_c/include/mlvm/*.h"), *src.glob("runtime_c/src/*.[ch]"),
        *src.glob("runtime_c/src/kernels/*.[ch]"), *src.glob("codegen/templates/*.j2"),
        *src.rglob("*.py"),
    ) if "__pycache__" not in p.parts]
    missing = [w for w in wanted if w not in names]
    assert not missing, missing
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry).decode()
    assert "mlvm-aot = mlvm.cli:aot_main" in scripts and "mlvm-opt = mlvm.cli:opt_main" in scripts
