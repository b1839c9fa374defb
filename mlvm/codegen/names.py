"""Turning user strings into C: identifiers and string literals.

No user string reaches generated C except through these two functions.
"""

from __future__ import annotations

import re

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed
    sizeof static struct switch typedef union unsigned void volatile while
    _Bool _Complex _Imaginary""".split()
)


def c_ident(name: str, fallback: str = "x") -> str:
    """A C identifier made from `name`: [A-Za-z0-9_] kept, the rest as _XX hex.

    Leading underscores are dropped (reserved in C), a leading digit or a
    keyword gets a prefix. Distinct names can collide only through the
    `_XX` escape, which callers de-duplicate with `unique`.
    """
    out = re.sub(r"[^A-Za-z0-9_]", lambda m: f"_{ord(m.group()):02x}", name)
    out = out.lstrip("_")
    if not out:
        out = fallback
    if out[0].isdigit() or out in C_KEYWORDS:
        out = f"{fallback}_{out}"
    return out


def unique(name: str, taken: set[str]) -> str:
    """`name`, or `name_2`, `name_3`... whichever is not in `taken`; records it."""
    cand, k = name, 2
    while cand in taken:
        cand = f"{name}_{k}"
        k += 1
    taken.add(cand)
    return cand


def c_string(text: str) -> str:
    """A C99 string literal whose bytes are the UTF-8 encoding of `text`.

    Printable ASCII passes through except `"`, `\\` and `?` (trigraphs);
    every other byte becomes a three-digit octal escape.
    """
    parts: list[str] = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\?':
            parts.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            parts.append(ch)
        else:
            parts.append(f"\\{b:03o}")
    return '"' + "".join(parts) + '"'
