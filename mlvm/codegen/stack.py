"""`<M>_STACK_BYTES`: an upper bound of the stack a call of a generated
module uses on each Cortex-M core of mcu.CORES, stated in its header.

The bound is the deepest chain of calls from an exported function:

* the module's own functions (found in the C it was emitted as): a frame of
  at most the callee-saved registers, a slot for each byte of its parameters
  and locals, a slot for each value it may keep across a call (an address
  such as `arena + 64` or a constant used again after the call: GCC computes
  it once and, short of registers, keeps it on the stack), its largest
  outgoing argument list and 16 bytes; tests/codegen/test_stack.py compiles
  many modules for every core and checks GCC's frames stay under these;
* what it calls in the runtime, the C library and libgcc, from the table
  stack_table.py writes (GCC's call graph of the runtime; the libraries'
  disassembly), where a call through a pointer from the runtime (a kernel
  calling the module's epilogue) costs the deepest function it may reach.

Not counted: native functions a module imports (the caller's code)."""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from mlvm.codegen import mcu

# Types whose locals are one word or two on a 32-bit core; structs are
# sized by the table (their sizeof on the core).
_WIDE = {"double", "int64_t", "uint64_t", "long long"}
_SCALARS = {"float", "int", "unsigned", "char", "short", "long", "size_t", "ptrdiff_t", "_Bool",
            "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "mlvm_index_t",
            "mlvm_status_t", "mlvm_dtype_t", "mlvm_half_t", "signed", *_WIDE}
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}
# The runtime's macros generated code uses as expressions (mlvm/kernels.h's
# MLVM_MADD: a multiply-add; MLVM_VECTOR_PICK: one of two descriptors; no
# call); parsed as keywords are.
_MACROS = {"MLVM_MADD", "MLVM_VECTOR_PICK"}
_KEYWORDS |= _MACROS
_FUNC = re.compile(
    r"^(?:static\s+)?(?:const\s+)?[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{]*?)\)\s*\n\{\n(.*?)\n\}\n",
    re.M | re.S)
_DECL = re.compile(
    r"^\s*((?:static\s+)?(?:const\s+|volatile\s+)*(?:unsigned\s+|signed\s+)?"
    r"(?:long\s+long|[A-Za-z_]\w*))\s+(?![=(])([^;]*);\s*$", re.M)
_BRACE = re.compile(r"[{}]")
_CALL = re.compile(r"(->|\.)?\b([A-Za-z_]\w*)\s*\(")
# The tokens of a body, for the values it may keep (_kept_bytes).
_TOKEN = re.compile(
    r"(?P<num>0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+[fFlL]?"  # hex float
    r"|(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?[fFlL]?|\d+[eE][-+]?\d+[fFlL]?"
    r"|(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)"
    r"|(?P<name>[A-Za-z_]\w*)|(?P<arrow>->)|(?P<punct>[^\s\w])")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", re.S)
# Names that are no value: qualifiers and type words.
_NOT_VALUES = {"const", "volatile", "restrict", "static", "struct", "void", "goto",
               "unsigned", "signed", "long", "short", "int", "char", "float", "double"}
_CAST = re.compile(r"\((?:(?:const|volatile|restrict|unsigned|signed|struct|long|short|int|char|"
                   r"float|double|void|_Bool|size_t|ptrdiff_t|mlvm_\w+|\w+_t)\b\s*)+\**\)")
_INNER = re.compile(r"\(([^()]*)\)")
# A cast ending where a group starts (searched in the characters just
# before it, not the whole body: the search is per group).
_CAST_SPAN = 160
_CAST_BEFORE = re.compile(r"\(\s*" + _CAST.pattern + r"\s*$")
_OPERAND_OF_CAST = re.compile(r"[(,]\s*" + _CAST.pattern + r"\s*$")
_LOOP = re.compile(r"\b(?:for|while)\s*\(|\bdo\s*\{")
# Room per byte of parameters and locals (copies GCC keeps of them).
SPILL = 1


class StackUnknown(Exception):
    """The module calls or declares something the bound cannot size."""


@dataclass
class CFunction:
    name: str
    params: int             # bytes of its parameters
    local_bytes: int        # of its locals (not static ones)
    out_args: int           # most arguments of one call it makes
    calls: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)  # identifiers it uses (callbacks it passes)
    indirect: bool = False  # calls through a pointer (an import)
    kept: int = 0           # bytes of the values it may keep across a call


@cache
def table() -> dict[str, Any]:
    return json.loads(mcu.STACK_TABLE.read_text())


def _split_top(s: str) -> list[str]:
    """s split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _base_type(ctype: str) -> str:
    """A declaration's type without its qualifiers."""
    return re.sub(r"\b(static|const|volatile|unsigned|signed)\b", "", ctype).strip()


def _type_bytes(base: str, pointer: bool, types: dict[str, int]) -> int:
    if pointer or base == "void":
        return 4
    if base in _WIDE:
        return 8
    if base in _SCALARS:
        return 4
    if base in types:
        return (types[base] + 3) // 4 * 4
    raise StackUnknown(f"a local of type {base}")


def _declared(body: str, types: dict[str, int]) -> int:
    """Bytes of the locals a function body declares (not static ones)."""
    total = 0
    for m in _DECL.finditer(body):
        ctype, rest = m.group(1), m.group(2)
        base = _base_type(ctype)
        if base in _KEYWORDS or ctype.startswith("static"):
            continue
        if not (base in _SCALARS or base in types or base == "void" or base.endswith("_t")):
            continue  # an expression statement, not a declaration
        for d in _split_top(rest):
            name, _, init = d.partition("=")
            pointer = "*" in name
            n = 1
            for dim in re.findall(r"\[([^\]]*)\]", name):
                if dim.strip() == "" and init.strip().startswith("{"):
                    n *= len(_split_top(init.strip()[1:-1]))  # sized by its initializer
                elif dim.strip().isdigit():
                    n *= int(dim)
                else:
                    raise StackUnknown(f"an array of size {dim.strip() or '?'}")
            total += n * _type_bytes(base, pointer, types)
    return total


def _closing(text: str, i: int) -> int:
    """Index of the brace closing the one at text[i]."""
    depth = 0
    for m in _BRACE.finditer(text, i):
        depth += 1 if m.group() == "{" else -1
        if depth == 0:
            return m.start()
    raise StackUnknown("unbalanced braces")


def _scope_bytes(body: str, types: dict[str, int]) -> int:
    """Bytes of the locals of a block: its own declarations and the largest
    of its inner blocks' (GCC shares stack slots between sibling blocks, and
    spill slots between values whose lives do not overlap)."""
    own: list[str] = []
    inner = 0
    i = 0
    while (k := body.find("{", i)) >= 0:
        own.append(body[i:k])
        j = _closing(body, k)
        b = k - 1
        while b >= 0 and body[b].isspace():
            b -= 1
        if b >= 0 and body[b] == "=":
            own.append(body[k:j + 1])  # an initializer, not a block
        else:
            inner = max(inner, _scope_bytes(body[k + 1:j], types))
            own.append(";\n")
        i = j + 1
    own.append(body[i:])
    return _declared("".join(own), types) + inner


def _param_name(param: str) -> str:
    m = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", param)
    return "" if m is None else m.group(1)


def _declared_names(body: str) -> set[str]:
    """Names a body declares as locals (their slots are counted already)."""
    names: set[str] = set()
    for m in _DECL.finditer(body):
        if _base_type(m.group(1)) in _KEYWORDS | {"goto"}:
            continue  # return x; goto l;
        for d in _split_top(m.group(2)):
            names.add(_param_name(d.partition("=")[0]))
    for m in re.finditer(r"\bfor\s*\(\s*[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*=", body):
        names.add(m.group(1))
    return names


def _matching(text: str, i: int, open_: str = "(", close: str = ")") -> int:
    """Index just past the bracket closing the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        depth += (text[j] == open_) - (text[j] == close)
        if depth == 0:
            return j + 1
    raise StackUnknown("unbalanced parentheses")


def _loops(body: str) -> list[tuple[int, int, str]]:
    """Every loop of a body, nested ones too: from its keyword to its end
    (the block, or the one statement, after the header), and the counter
    its `for` header sets ("" for none)."""
    spans: list[tuple[int, int, str]] = []
    for m in _LOOP.finditer(body):
        counter = ""
        if m.group().startswith("do"):
            k = m.end() - 1
        else:
            k = _matching(body, m.end() - 1)
            c = re.match(r"for\s*\(\s*(?:[A-Za-z_]\w*\s+)*?([A-Za-z_]\w*)\s*=", body[m.start():k])
            counter = c.group(1) if c is not None else ""
            while k < len(body) and body[k].isspace():
                k += 1
        if k < len(body) and body[k] == "{":
            end = _closing(body, k) + 1
        else:  # one statement: to its ';' outside brackets, or the '}' closing a block in it
            paren = brace = 0
            end = k
            while end < len(body):
                ch = body[end]
                paren += (ch == "(") - (ch == ")")
                brace += (ch == "{") - (ch == "}")
                end += 1
                if paren == 0 and brace == 0 and ch in ";}":
                    break
        spans.append((m.start(), end, counter))
    return spans


def _normal(expr: str) -> str:
    """An expression's text without spaces or needless parentheses, each
    cast a marker `{T}` (the same value however it is written; a sum over
    a cast to another pointer type is another address)."""
    text = re.sub(r"\s+", "", _CAST.sub(
        lambda m: "{" + re.sub(r"\b(?:const|volatile|restrict)\b|\s", "", m.group()[1:-1]) + "}", expr))
    while True:  # parentheses that change nothing: around a name, a sum in a sum
        for m in _INNER.finditer(text):
            before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
            if re.fullmatch(r"[\w.]*", m.group(1)) and not re.fullmatch(r"\w", before) or (
                    before in ("", "(", "+", "}") and after in ("", ")", "+", "-")
                    and re.fullmatch(r"(?:\{[\w*]+\})?[\w.]+(?:[-+][\w.]+)*", m.group(1))):
                text = text[:m.start()] + m.group(1) + text[m.end():]
                break
        else:
            return text


def _number(text: str) -> tuple[str, int] | None:
    """A literal's key and bytes, or None for an integer one instruction
    builds (under 256)."""
    if re.fullmatch(r"(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*", text):
        digits = text.rstrip("uUlL")
        value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits)
        wide = "ll" in text.lower()
        return None if value < 256 and not wide else (f"#{value}{'L' * wide}", 8 if wide else 4)
    return text, 4 if text[-1] in "fF" else 8


def _summed(body: str, start: int, end: int) -> bool:
    """Whether the group body[start:end], or the cast of it that is a group
    of its own, is added to a constant (`(x) + 4`, `((T *)(x)) + 4`): the
    sum is the value kept, not the group."""
    while True:
        m = re.match(r"\s*[-+]\s*\d", body[end:])
        if m is not None:
            return True
        cast = _CAST_BEFORE.search(body, max(0, start - _CAST_SPAN), start)
        after = re.match(r"\s*\)", body[end:])
        if cast is None or after is None:
            return False
        start, end = cast.start(), end + after.end()


def _values(body: str, own: set[str]) -> list[tuple[str, int, int]]:
    """(key, position, bytes) of each use of a value GCC may compute once
    and keep: a name it must load (a weight array), a constant (an integer
    too wide for one instruction, a float), each argument of a call, each
    parenthesized expression and each `x + n` (`arena + 64`, `((float
    *)(arena + 0)) + 4`: an address)."""
    toks = [(m.lastgroup or "", m.group(), m.start()) for m in _TOKEN.finditer(body)]
    out: list[tuple[str, int, int]] = []

    def composite(key: str, at: int) -> None:
        out.append((key, at, 4))

    for i, (kind, text, at) in enumerate(toks):
        before = toks[i - 1][1] if i > 0 else ""
        after = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "num":
            num = _number(text)
            if num is not None and not (before in ("+", "-") and i > 1 and (
                    toks[i - 2][0] == "name" or toks[i - 2][1] == ")")):  # x + n's own
                out.append((num[0], at, num[1]))
        elif kind == "name":
            if not (text in own or text in _KEYWORDS or text in _SCALARS or text in _NOT_VALUES
                    or text.endswith("_t") or before in (".", "->") or after == "("):
                out.append((text, at, 4))
        elif text == "(":
            end = _matching(body, at)
            inner = body[at + 1:end - 1]
            if before in _KEYWORDS and before != "sizeof" or re.fullmatch(r"[A-Za-z_]\w*", before):
                if before not in _KEYWORDS:  # a call's arguments
                    args = [_normal(a) for a in _split_top(inner)]
                    # (a lone name or number is its own token's value)
                    for a in args:
                        if not _TOKEN.fullmatch(a):
                            composite(a, at)
            elif not (_CAST.fullmatch(re.sub(r"\s+", "", body[at:end])) or _summed(body, at, end)
                      or _OPERAND_OF_CAST.search(body, max(0, at - _CAST_SPAN), at)):
                # (the operand of a cast that is an argument or a group
                # itself: that is the value)
                composite(_normal(inner), at)
        elif text in "+-" and i + 1 < len(toks) and toks[i + 1][0] == "num" and i > 0:
            nxt = toks[i + 2][1] if i + 2 < len(toks) else ""
            if nxt in ("*", "/", "%", "[", ".") or not re.fullmatch(r"\d+[uUlL]*", after):
                continue
            if before == ")":  # the parenthesized operand
                depth, j = 0, i - 1
                while j >= 0:
                    depth += (toks[j][1] == ")") - (toks[j][1] == "(")
                    if depth == 0:
                        break
                    j -= 1
                left = body[toks[j][2]:toks[i - 1][2] + 1]
            elif toks[i - 1][0] == "name":
                if i > 1 and toks[i - 2][1] == "(" and nxt == ")":
                    continue  # all of a group: the group (or what it is cast to) is the value
                left = before
            else:
                continue
            composite(f"{_normal(left)}{text}{after.rstrip('uUlL')}", at)
    return out


def _kept_bytes(body: str, own: set[str]) -> int:
    """The most bytes of values live across one call: a value is live from
    its first use to its last (a use in a loop the value does not change
    in, from the loop's start to its end: GCC hoists it; a value of a
    loop's counter lives within a step), and across each call whose return
    falls between. Not counted: the function's own parameters and locals
    (their slots are counted already)."""
    body = _COMMENT.sub(lambda m: " " * len(m.group()), body)
    loops = _loops(body)  # by start: a loop's enclosing ones come before it
    starts = [a for a, _, _ in loops]
    parent: list[int] = []
    for k, (a, _, _) in enumerate(loops):
        up = k - 1
        while up >= 0 and loops[up][1] <= a:
            up = parent[up]
        parent.append(up)

    def where(key: str, i: int) -> tuple[int, int]:
        """A use's span: the outermost loop around it that the value does
        not change in (inside the innermost loop whose counter it names)."""
        k = bisect_right(starts, i) - 1
        while k >= 0 and loops[k][1] <= i:
            k = parent[k]
        around: list[tuple[int, int, str]] = []
        while k >= 0:
            around.insert(0, loops[k])  # outermost first
            k = parent[k]
        names = set(re.findall(r"[A-Za-z_]\w*", key))
        varying = [k for k, (_, _, c) in enumerate(around) if c and c in names]
        inside = around[varying[-1] + 1:] if varying else around
        return (inside[0][0], inside[0][1]) if inside else (i, i)

    spans: dict[str, tuple[int, int, int]] = {}
    for key, at, width in _values(body, own):
        a, b = where(key, at)
        lo, hi, _ = spans.get(key, (a, b, width))
        spans[key] = (min(lo, a), max(hi, b), width)
    returns = []
    for call in _CALL.finditer(body):
        if call.group(2) in _KEYWORDS:
            continue
        returns.append(_matching(body, call.end() - 1))
    returns.sort()
    live = [0] * (len(returns) + 1)
    for lo, hi, width in spans.values():
        first, last = bisect_right(returns, lo), bisect_left(returns, hi)
        if first < last:  # returns[first:last] fall strictly inside
            live[first] += width
            live[last] -= width
    most = run = 0
    for d in live:
        run += d
        most = max(most, run)
    return most


def parse_functions(c_text: str, types: dict[str, int]) -> dict[str, CFunction]:
    """The functions defined in generated C, with what their frames hold."""
    funcs: dict[str, CFunction] = {}
    for m in _FUNC.finditer(c_text):
        name, params, body = m.group(1), m.group(2), m.group(3)
        plist = [p for p in _split_top(params) if p.strip() not in ("", "void")]
        wide = sum(1 for p in plist if "*" not in p and any(w in p for w in _WIDE))
        f = CFunction(name, 4 * len(plist) + 4 * wide, _scope_bytes(body, types), 0)
        f.named = set(re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*\()", body))
        for call in _CALL.finditer(body):
            callee = call.group(2)
            if callee in _KEYWORDS:
                continue
            if call.group(1) is not None:
                f.indirect = True
                continue
            f.calls.add(callee)
            # arguments of this call: up to its closing parenthesis
            depth, i = 1, call.end()
            while i < len(body) and depth > 0:
                depth += {"(": 1, ")": -1}.get(body[i], 0)
                i += 1
            f.out_args = max(f.out_args, len(_split_top(body[call.end():i - 1])))
        f.kept = _kept_bytes(body, {_param_name(p) for p in plist} | _declared_names(body))
        funcs[name] = f
    return funcs


def with_header_types(h_text: str, types: dict[str, int]) -> dict[str, int]:
    """types and the structs a generated header defines (the call states of
    suspendable functions): their fields' bytes, and 8 for padding."""
    out = dict(types)
    for m in re.finditer(r"^typedef struct \w+ \{\n(.*?)\n\} (\w+);", h_text, re.M | re.S):
        out[m.group(2)] = _declared(m.group(1), out) + 8
    return out


def frame_bound(f: CFunction, saved: int) -> int:
    """The most stack f's own frame takes (see the module docstring): an
    argument takes at most 8 bytes on the stack, and the first ones go in
    registers r0-r3 (two, if they are 64-bit)."""
    return (saved + SPILL * (f.params + f.local_bytes) + f.kept + 8 * max(0, f.out_args - 2) + 16
            + 7) // 8 * 8


def core_bound(
    c_text: str, core: str, h_text: str = "", parsed: dict[str, dict[str, CFunction]] | None = None,
) -> int:
    """The module's stack bound on one core (h_text: its header, for the
    types it defines; parsed: the functions already parsed, by type table,
    shared by cores whose types have the same sizes)."""
    t = table()["cores"][core]
    lib: dict[str, list[int | None]] = t["functions"]
    types = with_header_types(h_text, t["types"])
    key = repr(sorted(types.items()))
    parsed = {} if parsed is None else parsed
    if key not in parsed:
        parsed[key] = parse_functions(c_text, types)
    funcs = parsed[key]
    # generated functions a body names without calling: passed to the runtime
    callbacks = sorted({n for f in funcs.values() for n in f.named if n in funcs})
    memo: dict[str, int] = {}

    def depth(name: str, through: int) -> int:
        if name in funcs:
            if name not in memo:
                f = funcs[name]
                memo[name] = -1  # recursion guard
                deep = t["libgcc"]
                for c in f.calls:
                    deep = max(deep, depth(c, through))
                memo[name] = frame_bound(f, t["saved"]) + deep
            if memo[name] < 0:
                raise StackUnknown(f"recursion through {name}")
            return memo[name]
        if name in lib:
            d, ind = lib[name]
            assert d is not None
            return d if ind is None else max(d, ind + through)
        raise StackUnknown(f"a call of {name}")

    # what a call through a pointer may reach: the runtime's own targets
    # (the GEMM's packing function) or the module's callbacks
    through = t["through_pointer"]
    for cb in callbacks:
        through = max(through, depth(cb, 0))
    memo.clear()
    return max((depth(n, through) for n in funcs), default=0)


def stack_lines(c_text: str, h_text: str, mod: str) -> list[str]:
    """The header's `<MOD>_STACK_BYTES` block: one #if per core group
    (h_text: the header without it)."""
    t = table()
    try:
        parsed: dict[str, dict[str, CFunction]] = {}
        bounds = {core: core_bound(c_text, core, h_text, parsed) for core in mcu.CORES}
    except StackUnknown as e:
        return [f"/* {mod}_STACK_BYTES is not stated: the module has {e}. */"]
    lines = [
        f"/* Stack a call needs at most, by core, built by {t['compiler']} with the",
        " * flags of docs/embedded.md: the module's frames and the deepest chain of",
        " * runtime and C library calls (imported functions not included). Not",
        " * stated for other targets or compilers. */",
    ]
    for i, (test, cores) in enumerate(mcu.GROUPS):
        lines.append(f"#{'if' if i == 0 else 'elif'} {test}")
        lines.append(f"#define {mod}_STACK_BYTES {max(bounds[c] for c in cores)}u")
    lines.append("#endif")
    return lines
