"""Invalid programs of one op each, and what their error must say.

Shared by the verifier tests: a `Bad` case renders a function whose line
BAD_LINE holds the offending op; `check_message` requires one line with the
file, that line, the op's name, "error" and the case's own words.
"""

from __future__ import annotations

from dataclasses import dataclass

BAD_LINE = 3


@dataclass
class Bad:
    id: str
    op: str
    operands: list[str]
    results: list[str]
    props: str = ""
    words: tuple[str, ...] = ()

    def text(self) -> str:
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.operands))
        names = ", ".join(f"%a{i}" for i in range(len(self.operands)))
        res = ", ".join(self.results)
        n = len(self.results)
        lhs = "%0" if n == 1 else f"%0:{n}"
        rets = "%0" if n == 1 else ", ".join(f"%0#{i}" for i in range(n))
        props = f" <{{{self.props}}}>" if self.props else ""
        return (
            f"func.func @f({args}) -> ({res}) {{\n"
            '  %pad = "mlvm.fill"() <{value = 0.0 : f32}> : () -> tensor<2xf32>\n'
            f'  {lhs} = "mlvm.{self.op}"({names}){props} : ({", ".join(self.operands)}) -> ({res})\n'
            f"  func.return {rets} : {res}\n"
            "}\n"
        )


def check_message(msg: str, path: str, case: Bad) -> None:
    assert msg == msg.strip() and "\n" not in msg, f"not one line: {msg!r}"
    assert f"{path}:{BAD_LINE}:" in msg, f"no {path}:{BAD_LINE}: in {msg!r}"
    assert f"mlvm.{case.op}" in msg, f"op name missing: {msg!r}"
    assert "error" in msg, msg
    for w in case.words:
        assert w in msg, f"{w!r} missing from {msg!r}"
