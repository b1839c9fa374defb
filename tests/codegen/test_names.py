"""User strings in generated C: escaped everywhere, and never two names for one symbol.

Regression tests for hardening findings 1 and 2: a function name reached a
C comment of the header unescaped (code ran when the .so was loaded), and
names that collide after sanitizing were emitted as clashing symbols.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlvm
from mlvm.codegen.names import c_comment
from mlvm.diagnostics import MlvmError
from mlvm.pipeline import write_c

IDENTITY = """\
func.func @{name}(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %0 = "mlvm.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}}
"""

# Each would end the header's comment and define a constructor that
# traps when the shared object is loaded, were it not escaped.
HOSTILE = [
    '"x*/ __attribute__((constructor)) static void pwn(void) { __builtin_trap(); } /*"',
    '"x??/\\n*/ __attribute__((constructor)) static void pwn(void) { __builtin_trap(); } /*"',
    '"x\\\\\\n*/ __attribute__((constructor)) static void pwn(void) { __builtin_trap(); } /*"',
    '"*\\0a/ __attribute__((constructor)) static void pwn(void) { __builtin_trap(); } /*"',
]


@pytest.mark.parametrize("name", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_function_name_cannot_run_code_at_load(tmp_path: Path, name: str) -> None:
    src = tmp_path / "evil.mlir"
    src.write_text(IDENTITY.format(name=name))
    m = mlvm.compile(src)  # builds with -Werror and loads: a constructor would trap here
    (fn,) = m.functions.values()
    x = np.array([1.0, -2.0, 3.5], np.float32)
    np.testing.assert_array_equal(m[fn.name](x), -x)
    _, h = write_c(src, tmp_path / "evil.c")
    header = h.read_text()
    assert "__attribute__((constructor))" in header  # kept, as inert comment text
    for line in header.splitlines():
        if "__attribute__((constructor))" in line:
            assert line.startswith("/* ") and line.endswith(" */") and line.count("*/") == 1


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_c_comment_cannot_end_or_splice_a_comment(text: str) -> None:
    out = c_comment(text)
    assert "*/" not in out and "??" not in out and "\\" not in out
    assert all(0x20 <= ord(ch) < 0x7F for ch in out)


CLASHES = {
    "case": ("a", "A"),
    "suffix_begin": ("f", "f_begin"),
    "suffix_entry": ("f", "f__entry"),
    "descriptor": ("module",),
    "escape": ('"a.b"', "a_2eb"),
    "arena_macro": ("ARENA_BYTES",),
}


@pytest.mark.parametrize("names", CLASHES.values(), ids=CLASHES.keys())
def test_names_colliding_after_sanitizing_are_refused(tmp_path: Path, names: tuple[str, ...]) -> None:
    src = tmp_path / "m.mlir"
    src.write_text("".join(IDENTITY.format(name=n) for n in names))
    with pytest.raises(MlvmError, match=r"m\.mlir:\d+:1: error: .*both become the C name"):
        write_c(src, tmp_path / "m.c")


def test_distinct_names_still_compile(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text("".join(IDENTITY.format(name=n) for n in ("a", "b", "a_b", "f_begun")))
    m = mlvm.compile(src)
    assert sorted(m.functions) == ["a", "a_b", "b", "f_begun"]


QUEUES = """\
func.func @main() -> tensor<2xf32> {
  %a = "mlvm.queue_pop"() <{queue = "q\\00a"}> : () -> tensor<2xf32>
  %b = "mlvm.queue_pop"() <{queue = "q\\00b"}> : () -> tensor<2xf32>
  %c = "mlvm.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
"""


def test_queue_names_with_nul_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "q.mlir"
    src.write_text(QUEUES)
    with pytest.raises(MlvmError, match=r"q\.mlir:2:\d+: error: .*queue name .* no NUL"):
        write_c(src, tmp_path / "q.c")


def test_function_names_with_nul_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "f.mlir"
    src.write_text(IDENTITY.format(name='"f\\00g"'))
    with pytest.raises(MlvmError, match=r"f\.mlir:1:1: error: .*no NUL"):
        write_c(src, tmp_path / "f.c")
