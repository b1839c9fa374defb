"""Turning user strings into C: identifiers, string literals and comments.

No user string reaches generated C except through `c_ident`, `c_string` or
`c_comment`; `Symbols` refuses two user names that would become one C name.
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


def c_comment(text: str) -> str:
    """`text` made safe inside a `/* */` comment.

    Only printable ASCII is kept, and `*`, `?` and `\\` become `.`: so no
    `*/` can end the comment, no trigraph (`??/`) can form, and no
    backslash can splice the next line into it.
    """
    return "".join(
        "." if ch in "*?\\" or not 0x20 <= ord(ch) < 0x7F else ch for ch in text
    )


class NameClash(ValueError):
    """Two user names that become the same C name."""


class Symbols:
    """The file-scope C names of one module, each owned by the user name it came from.

    C is case-sensitive but the header's macros are upper-cased names, so
    names are compared case-folded: `@a` and `@A` clash (both would define
    `M_A_ARENA_BYTES`), as do `@f` and `@f_begin` (`m_f_begin` twice).
    """

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}

    def claim(self, cname: str, owner: str) -> None:
        key = cname.lower()
        prev = self._owner.get(key)
        if prev is not None and prev != owner:
            raise NameClash(
                f"{owner} and {prev} both become the C name '{cname}'; rename one of them"
            )
        self._owner[key] = owner
