"""docs/tutorial.md, executed: every code block, in order, in a fresh folder.

`<!-- file: NAME -->` before a block writes it to NAME; `python` blocks run
in one shared namespace; `sh` blocks run with the package's tools first on
PATH. So the tutorial cannot describe commands that do not work.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
BLOCK = re.compile(r"(?:<!-- file: (?P<file>[\w.]+) -->\n)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S)


def blocks() -> list[tuple[str, str | None, str]]:
    return [(m["lang"], m["file"], m["code"]) for m in BLOCK.finditer(DOC.read_text())]


def test_tutorial_has_every_kind_of_block() -> None:
    langs = {lang for lang, _, _ in blocks()}
    assert {"mlir", "python", "sh", "c"} <= langs


def test_tutorial_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    namespace: dict[str, object] = {}
    for k, (lang, file, code) in enumerate(blocks()):
        where = f"block {k + 1} ({lang})"
        if file is not None:
            (tmp_path / file).write_text(code)
        elif lang == "python":
            exec(compile(code, f"{DOC.name}:{where}", "exec"), namespace)  # noqa: S102
        elif lang == "sh":
            res = subprocess.run(["bash", "-e", "-c", code], env=env, capture_output=True, text=True)
            assert res.returncode == 0, f"{where}:\n{code}\n{res.stdout}{res.stderr}"
        else:
            raise AssertionError(f"{where}: a {lang} block needs a <!-- file: --> name")


def test_c_abi_build_recipe_runs(tmp_path: Path) -> None:
    """docs/c_abi.md's "Building by hand" commands, as written."""
    doc = DOC.with_name("c_abi.md").read_text()
    recipe = re.search(r"<!-- recipe -->\n```sh\n(.*?)```", doc, re.S)
    assert recipe is not None
    model = re.search(r"<!-- file: mlp.mlir -->\n```mlir\n(.*?)```", DOC.read_text(), re.S)
    main = re.search(r"<!-- file: main.c -->\n```c\n(.*?)```", DOC.read_text(), re.S)
    assert model is not None and main is not None
    (tmp_path / "model.mlir").write_text(model.group(1))
    (tmp_path / "main.c").write_text(main.group(1).replace("mlp", "model").replace("MLP", "MODEL"))
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(tmp_path / "model.npz", w1=rng.standard_normal((4, 8)).astype(np.float32),
             b1=rng.standard_normal(8).astype(np.float32),
             w2=rng.standard_normal((8, 3)).astype(np.float32))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(["bash", "-e", "-c", recipe.group(1)], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    probs = [float(v) for v in res.stdout.split()[-3:]]
    assert abs(sum(probs) - 1.0) < 1e-5
