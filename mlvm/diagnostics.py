"""User-facing errors: one line, naming the file, the line and the op.

Everything a user can get wrong (syntax, unknown ops, shapes, parameters,
dtypes) surfaces as `MlvmError`; the CLI prints its text and exits 1.
"""

from __future__ import annotations

import bisect
import math
import re
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer


class MlvmError(ValueError):
    """A mistake in the user's input, reported as one line.

    Messages quote user strings (names from a model file): control characters
    in them are escaped here, so no name can break the message over lines.
    """

    def __init__(self, msg: str) -> None:
        super().__init__(_CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), msg))


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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


MAX_TENSOR_BYTES = 1 << 40
"""Largest tensor, arena or data size a module may declare (CompileOptions.max_bytes)."""

MAX_DENSE_ELEMENTS = 1 << 24
"""Largest `dense<...>` literal the parser expands (a splat is expanded in memory)."""

_DENSE_ELEMENTS = (IntegerType, IndexType, Float16Type, Float32Type, Float64Type)


class _Lexer(MLIRLexer):
    """xDSL's lexer with a string-literal pattern that cannot backtrack.

    The stock pattern nests `+` inside `*`, so an unterminated string takes
    time exponential in its length; possessive quantifiers make it linear.
    """

    _unescaped_characters_regex = re.compile(
        r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
    )


class LocatingParser(Parser):
    """xDSL's parser, recording each op's source position as its location.

    It also bounds what a hostile file can make it do: no backtracking
    string lexer, and no `dense` literal expanded past MAX_DENSE_ELEMENTS.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0) -> None:
        # xDSL's own lexer would lex the first token of `text`: give it none.
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_Lexer(Input(text, name)))
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

    # What xDSL's parser raises, besides ParseError, on bad input: integers
    # out of range, float kinds it cannot convert, sizes that overflow.
    _INPUT_ERRORS = (ValueError, OverflowError, NotImplementedError, MemoryError,
                     RecursionError, AssertionError, KeyError, TypeError, IndexError,
                     DiagnosticException)

    def parse_module_checked(self) -> ModuleOp:
        """`parse_module`, with every failure a ParseError at the current token.

        A model file is untrusted: whatever it makes the parser raise is the
        input's fault, reported where the parser stood.
        """
        try:
            return self.parse_module()
        except ParseError:
            raise
        except self._INPUT_ERRORS as e:
            what = _first_line(str(e)) or type(e).__name__
            raise ParseError(self._current_token.span, what) from None

    def _parse_dense_literal_type(self):  # type: ignore[no-untyped-def]
        t = super()._parse_dense_literal_type()
        elem = t.element_type
        if not isinstance(elem, _DENSE_ELEMENTS) or (
            isinstance(elem, IntegerType) and elem.width.data > 64
        ):
            self.raise_error(f"dense literals of element type {elem} are not supported")
        n = math.prod(t.get_shape())
        if n > MAX_DENSE_ELEMENTS:
            self.raise_error(
                f"dense literal of {n} elements is larger than the limit of "
                f"{MAX_DENSE_ELEMENTS} (pass large data as parameters)"
            )
        return t


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def parse_module(ctx: Context, text: str, filename: str) -> ModuleOp:
    """Parse MLIR text; syntax errors become one-line `MlvmError`s."""
    try:
        return LocatingParser(ctx, text, filename).parse_module_checked()
    except ParseError as e:
        raise parse_error(e) from None


def verify_module(module: ModuleOp, filename: str, max_bytes: int = MAX_TENSOR_BYTES) -> None:
    """Check a module before any pass touches it, stopping at the first error.

    Every op's own verifier in source order, then what xDSL leaves out:
    SSA dominance (a use before its definition would compile to reads of
    unwritten memory, and a cycle would hang the passes), one-block
    functions ending in `func.return`, and tensors no larger than `max_bytes`.
    """
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            msg = _first_line(str(e)).removeprefix("Operation does not verify: ")
            raise op_error(op, msg, filename) from None
    for op in module.ops:
        if isinstance(op, FuncOp):
            _check_function(op, filename)
    _check_dominance(module.body.block, set(), filename)
    _check_sizes(module, filename, max_bytes)


def _check_function(f: FuncOp, filename: str) -> None:
    name = f.sym_name.data
    if len(f.body.blocks) != 1:
        raise op_error(f, f"function @{name} must have exactly one block", filename)
    last = f.body.block.last_op
    if not isinstance(last, ReturnOp):
        raise op_error(f, f"function @{name} must end with func.return", filename)


def _check_dominance(block: Block, visible: set[SSAValue], filename: str) -> None:
    """Every operand is defined before its use, in this block or an enclosing one."""
    scope = set(visible)
    scope.update(block.args)
    for op in block.ops:
        for k, v in enumerate(op.operands):
            if v not in scope:
                name = f"%{v.name_hint}" if v.name_hint else f"operand {k}"
                raise op_error(op, f"{name} is used before it is defined", filename)
        for region in op.regions:
            for inner in region.blocks:
                _check_dominance(inner, scope, filename)
        scope.update(op.results)


def tensor_bytes(t: Attribute) -> int:
    """Bytes of a static tensor type (element sizes rounded up to bytes); 0 otherwise."""
    if not isinstance(t, TensorType):
        return 0
    elem = t.element_type
    if isinstance(elem, IntegerType):
        width = elem.width.data
    elif isinstance(elem, AnyFloat):
        width = elem.bitwidth
    else:
        width = 64
    return math.prod(max(d, 0) for d in t.get_shape()) * max(1, (width + 7) // 8)


def _check_sizes(module: ModuleOp, filename: str, max_bytes: int) -> None:
    state = 0
    for op in module.walk():
        types: list[tuple[str, Attribute]] = [(f"result {k}", r.type) for k, r in enumerate(op.results)]
        # Tensor types held as properties (a global's): sized like results.
        types += [(name, t) for name, t in op.properties.items() if isinstance(t, TensorType)]
        if op.name == "mlvm.global":
            state += sum(tensor_bytes(t) for _, t in types)
            if state > max_bytes:
                raise op_error(
                    op, f"the module state needs more than the limit of {max_bytes} bytes", filename
                )
        if isinstance(op, FuncOp):
            ft = op.function_type
            types += [(f"argument {k}", t) for k, t in enumerate(ft.inputs.data)]
            types += [(f"result {k}", t) for k, t in enumerate(ft.outputs.data)]
        for what, t in types:
            n = tensor_bytes(t)
            if n > max_bytes:
                raise op_error(
                    op, f"{what} {t} needs {n} bytes, more than the limit of {max_bytes}",
                    filename,
                )


def read_source_bytes(path: str | Path) -> bytes:
    """A model file's bytes, or a one-line error naming it."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise MlvmError(f"{p}: error: no such file") from None
    except OSError as e:
        raise MlvmError(f"{p}: error: cannot read: {e.strerror or e}") from None


def read_source(path: str | Path) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MlvmError(f"{p}: error: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise MlvmError(f"{p}: error: cannot read: {e}") from None
