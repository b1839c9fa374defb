"""User-facing errors: one line, naming the file, the line and the op.

Everything a user can get wrong (syntax, unknown ops, shapes, parameters,
dtypes) surfaces as `MlvmError`; the CLI prints its text and exits 1.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError


class MlvmError(ValueError):
    """A mistake in the user's input, reported as one line."""


def where(op: Operation, fallback: str = "<input>") -> str:
    """`file:line:col` of an op, or the fallback name when it has no location."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    parent = op.parent_op()
    if parent is not None:
        return where(parent, fallback)
    return fallback


def op_error(op: Operation, msg: str, fallback: str = "<input>") -> MlvmError:
    """`file:line:col: error: op.name: msg` (op verifiers already lead with the name)."""
    if not msg.startswith(f"{op.name}:"):
        msg = f"{op.name}: {msg}"
    return MlvmError(f"{where(op, fallback)}: error: {msg}")


_UNKNOWN_OP = re.compile(r"^Operation (\S+) is not registered$")


def parse_error(e: ParseError) -> MlvmError:
    loc = e.span.get_location()
    msg = _first_line(e.msg)
    if (m := _UNKNOWN_OP.match(msg)) is not None:
        msg = f"unknown op '{m.group(1)}'"
    return MlvmError(f"{loc.file}:{loc.line}:{loc.col}: error: {msg}")


class LocatingParser(Parser):
    """xDSL's parser, recording each op's source position as its location."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0) -> None:
        super().__init__(ctx, text, name)
        self._file = name
        self._line_offset = line_offset
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        line = bisect.bisect_right(self._line_starts, start)
        col = start - self._line_starts[line - 1] + 1
        op.location = FileLineColLoc(
            StringAttr(self._file), IntAttr(line + self._line_offset), IntAttr(col)
        )
        return op


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def parse_module(ctx: Context, text: str, filename: str) -> ModuleOp:
    """Parse MLIR text; syntax errors become one-line `MlvmError`s."""
    try:
        return LocatingParser(ctx, text, filename).parse_module()
    except ParseError as e:
        raise parse_error(e) from None


def verify_module(module: ModuleOp, filename: str) -> None:
    """Run every op's verifier in source order; the first failure is raised."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            msg = _first_line(str(e)).removeprefix("Operation does not verify: ")
            raise op_error(op, msg, filename) from None


def read_source(path: str | Path) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MlvmError(f"{p}: error: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise MlvmError(f"{p}: error: cannot read: {e}") from None
