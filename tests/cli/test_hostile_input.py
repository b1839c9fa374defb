"""Hostile and careless model files: one line, exit 1, bounded time, no traceback.

Regression tests for hardening findings 4 (sizes), 5 (SSA dominance),
9 (empty reductions), 10 (tracebacks) and 11 (hangs). Compiles run
in-process through `aot_main` (a traceback there is an uncaught exception,
which fails the test); the hang cases run in a subprocess under a timeout.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mlvm.cli import aot_main, opt_main

BIN = Path(sys.executable).parent

RELU = """\
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = "mlvm.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""


def compile_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                  *extra: str, main=aot_main) -> str:  # type: ignore[no-untyped-def]
    src = tmp_path / "m.mlir"
    src.write_text(text)
    args = ["compile", str(src), "-o", str(tmp_path / "m.c"), *extra] if main is aot_main else [str(src), *extra]
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def fn(body: str, args: str = "%a: tensor<4xf32>", result: str = "tensor<4xf32>") -> str:
    return f"func.func @main({args}) -> {result} {{\n{body}\n}}\n"


# -- finding 5: dominance ---------------------------------------------------
USE_BEFORE_DEF = fn("""\
  %c = "mlvm.relu"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>""")

CYCLE = fn("""\
  %b = "mlvm.add"(%a, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "mlvm.add"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>""")


@pytest.mark.parametrize("flags", [[], ["--no-fuse"], ["--no-fuse", "--no-canonicalize"]])
def test_use_before_definition_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          flags: list[str]) -> None:
    err = compile_error(tmp_path, capsys, USE_BEFORE_DEF, *flags)
    assert "m.mlir:2:3: error: mlvm.relu: %b is used before it is defined" in err


def test_cycle_is_refused_before_inplace_can_hang(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    err = compile_error(tmp_path, capsys, CYCLE)
    assert "m.mlir:2:3: error: mlvm.add: %c is used before it is defined" in err


def test_function_without_return_is_refused(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    text = fn('  %b = "mlvm.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>')
    assert "m.mlir:2:3: error:" in compile_error(tmp_path, capsys, text)
    assert "m.mlir:2:3: error:" in compile_error(tmp_path, capsys, text, main=opt_main)


def test_return_of_undefined_value_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = fn("""\
  func.return %z : tensor<4xf32>
  %z = "mlvm.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>""")
    assert "error:" in compile_error(tmp_path, capsys, text)


def test_dominance_is_checked_by_mlvm_opt(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    err = compile_error(tmp_path, capsys, USE_BEFORE_DEF, "-p", "mlvm-inplace", main=opt_main)
    assert "%b is used before it is defined" in err


# -- finding 4: sizes --------------------------------------------------------
HUGE = "tensor<100000x100000x100000x100000xf32>"


def test_huge_argument_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = fn(f'  %b = "mlvm.relu"(%a) : ({HUGE}) -> {HUGE}\n  func.return %b : {HUGE}',
              args=f"%a: {HUGE}", result=HUGE)
    err = compile_error(tmp_path, capsys, text)
    assert "argument 0" in err and "more than the limit of 1099511627776" in err


def test_max_bytes_is_configurable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = compile_error(tmp_path, capsys, RELU, "--max-bytes", "15")
    assert "needs 16 bytes, more than the limit of 15" in err
    src = tmp_path / "ok.mlir"
    src.write_text(RELU)
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "ok.c"), "--max-bytes", "16"]) == 0


def test_arena_over_the_limit_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = fn("""\
  %b = "mlvm.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "mlvm.add"(%b, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = "mlvm.mul"(%c, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>""")
    err = compile_error(tmp_path, capsys, text, "--max-bytes", "32", "--no-fuse")
    assert "m.mlir:1:1: error: func.func: the arena needs 64 bytes, more than the limit of 32" in err


def test_arena_macro_is_never_truncated(tmp_path: Path) -> None:
    big = "tensor<65536x65536xf32>"  # 16 GiB: over 32-bit size_t
    text = fn(f"""\
  %b = "mlvm.exp"(%a) : ({big}) -> {big}
  %c = "mlvm.add"(%b, %a) : ({big}, {big}) -> {big}
  %d = "mlvm.mul"(%c, %b) : ({big}, {big}) -> {big}
  func.return %d : {big}""", args=f"%a: {big}", result=big)
    src = tmp_path / "big.mlir"
    src.write_text(text)
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "big.c"), "--no-fuse"]) == 0
    h = (tmp_path / "big.h").read_text()
    assert "#define BIG_ARENA_BYTES 17179869184u" in h
    assert "> SIZE_MAX" in (tmp_path / "big.c").read_text()  # refused where size_t is 32-bit


# -- finding 9: reductions over an empty axis --------------------------------
@pytest.mark.parametrize("op", [
    '"mlvm.reduce"(%a) <{kind = "max", axes = array<i64: 0>, keepdims = false}> : (tensor<0x3xf32>) -> tensor<3xf32>',
    '"mlvm.argmax"(%a) <{axis = 0 : i64}> : (tensor<0x3xf32>) -> tensor<3xi32>',
], ids=["max", "argmax"])
def test_empty_axis_max_and_argmax_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               op: str) -> None:
    rt = "tensor<3xi32>" if "argmax" in op else "tensor<3xf32>"
    text = fn(f"  %b = {op}\n  func.return %b : {rt}", args="%a: tensor<0x3xf32>", result=rt)
    assert "size 0" in compile_error(tmp_path, capsys, text)


# -- finding 10: what used to escape as a traceback ---------------------------
def const(value: str, t: str = "tensor<4xf32>") -> str:
    return fn(f'  %c = "mlvm.constant"() <{{value = {value}}}> : () -> {t}\n'
              f"  func.return %c : {t}", args="", result=t)


TRACEBACKS = {
    "splat_2_31": (const("dense<1.0> : tensor<2147483648xf32>", "tensor<2147483648xf32>"),
                   "dense literal of 2147483648 elements is larger than the limit"),
    "splat_overflow": (const("dense<1.0> : tensor<99999999999999999999xf32>"),
                       "dense literal of 99999999999999999999 elements"),
    "int_2_64": (const("dense<18446744073709551617> : tensor<4xi32>", "tensor<4xi32>"),
                 "out of range"),
    "complex": (const("dense<(1.0,2.0)> : tensor<4xcomplex<f32>>"), "not supported"),
    "f80": (const("dense<1.0> : tensor<4xf80>"), "not supported"),
    "broadcast_huge": (fn("""\
  %c = "mlvm.constant"() <{value = dense<1.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %d = "mlvm.broadcast_to"(%c) : (tensor<1xf32>) -> tensor<100000x100000x100000xf32>
  func.return %d : tensor<100000x100000x100000xf32>""", args="",
                          result="tensor<100000x100000x100000xf32>"), "more than the limit"),
    "int_attr_2_64": (fn("""\
  %b = "mlvm.softmax"(%a) <{axis = 18446744073709551617 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>"""), "error:"),
    "not_utf8": ("func.func @\xff", "error:"),
    "empty": ("", "error:"),
}


@pytest.mark.parametrize("case", TRACEBACKS.values(), ids=TRACEBACKS.keys())
def test_bad_input_is_one_line_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               case: tuple[str, str]) -> None:
    text, fragment = case
    src = tmp_path / "m.mlir"
    src.write_bytes(text.encode("latin-1"))
    rc = aot_main(["compile", str(src), "-o", str(tmp_path / "m.c")])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and len(err.splitlines()) == 1 and err.startswith(str(src)), err
    assert fragment in err, err


def test_broadcast_of_a_constant_is_not_expanded_past_the_fold_limit(tmp_path: Path) -> None:
    big = "tensor<10000x10000x10xf32>"  # 4 GB were it expanded
    text = fn(f"""\
  %c = "mlvm.constant"() <{{value = dense<1.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %d = "mlvm.broadcast_to"(%c) : (tensor<1xf32>) -> {big}
  func.return %d : {big}""", args="", result=big)
    src = tmp_path / "b.mlir"
    src.write_text(text)
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "b.c")]) == 0
    assert (tmp_path / "b.c").stat().st_size < 100_000


def test_missing_and_unwritable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert opt_main([str(tmp_path / "nope.mlir")]) == 1
    assert capsys.readouterr().err.strip() == f"{tmp_path / 'nope.mlir'}: error: No such file or directory"
    src = tmp_path / "ok.mlir"
    src.write_text(RELU)
    assert aot_main(["compile", str(src), "-o", "/proc/nope/m.c"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error:" in err


# -- finding 11: hangs --------------------------------------------------------
HANGS = {
    "unterminated_string": fn('  %b = "mlvm.relu"(%a) {x = "' + "abcdefghij" * 4
                              + '} : (tensor<4xf32>) -> tensor<4xf32>\n  func.return %b : tensor<4xf32>'),
    "unterminated_symbol": 'func.func @"' + "abcdefghij" * 5 + "(%a: tensor<4xf32>)",
    "unterminated_string_first": '"' + "a" * 5000,
    "splat_2_31": const("dense<1.0> : tensor<2147483648xf32>", "tensor<2147483648xf32>"),
}


@pytest.mark.parametrize("text", HANGS.values(), ids=HANGS.keys())
def test_hostile_input_cannot_hang_the_compiler(tmp_path: Path, text: str) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(text)
    t0 = time.monotonic()
    res = subprocess.run(
        [str(BIN / "mlvm-aot"), "compile", str(src), "-o", str(tmp_path / "m.c")],
        capture_output=True, text=True, timeout=60,
    )
    assert time.monotonic() - t0 < 30
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_hostile_input_through_the_python_api(tmp_path: Path) -> None:
    import mlvm

    src = tmp_path / "m.mlir"
    src.write_text(USE_BEFORE_DEF)
    with pytest.raises(ValueError, match="used before it is defined"):
        mlvm.compile(src)
    src.write_text(RELU)
    with pytest.raises(ValueError, match="parameter names must be strings"):
        mlvm.compile(src, params={1: np.zeros(3, np.float32)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="must be a numpy array"):
        mlvm.compile(src, params={"w": [1.0, 2.0]})  # type: ignore[dict-item]
