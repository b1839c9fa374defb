"""The memory plan of each function as data (JSON) and as a picture (SVG).

Read from a planned module: every arena buffer with its lifetime and offset,
the arena size, the lower bound (most bytes live at one op), and the sum of
all intermediates' sizes (what a planner that reuses nothing would need).
"""

from __future__ import annotations

import math

from html import escape
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from mlvm.diagnostics import MlvmError
from mlvm.analysis.storage import analyze, nbytes
from mlvm.dialect.base import MlvmOp
from mlvm.dialect.fused import FusedYieldOp
from mlvm.dialect.ops import ReshapeOp


def _int_attr(op: Operation, name: str) -> int:
    attr = op.attributes.get(name)
    assert isinstance(attr, IntegerAttr), f"{name} missing: run mlvm-plan-memory first"
    return int(attr.value.data)


def _yielded(v: SSAValue) -> bool:
    """A fused body's result, i.e. the fused op's own (already counted) value."""
    return any(isinstance(u.operation, FusedYieldOp) for u in v.uses)


def function_report(f: func.FuncOp) -> dict[str, Any]:
    fs = analyze(f)
    ops = list(f.body.block.ops)
    buffers: list[dict[str, Any]] = []
    for iv in sorted(fs.intervals, key=lambda iv: iv.start):
        if isinstance(iv.value, MlvmOp):  # a kernel's workspace
            if "mlvm.workspace" not in iv.value.attributes:
                continue  # planned without workspaces
            name = f"workspace of {ops[iv.start].name}#{iv.start}"
            offset = _int_attr(iv.value, "mlvm.workspace")
        else:
            owner = iv.value.owner
            assert isinstance(owner, Operation)
            offsets = owner.attributes.get("mlvm.offsets")
            assert isinstance(offsets, DenseArrayBase)
            idx = list(owner.results).index(iv.value)  # type: ignore[arg-type]
            name = iv.value.name_hint or f"{ops[iv.start].name}#{iv.start}"
            offset = int(offsets.get_values()[idx])
        buffers.append(
            {
                "value": name,
                "op": ops[iv.start].name,
                "start": iv.start,
                "end": iv.end,
                "offset": offset,
                "bytes": iv.size,
            }
        )
    # What a planner that reuses nothing allocates for the source program:
    # every computed value that is neither a view nor returned to the caller,
    # counting the values fused loops no longer store (the ops in their bodies).
    returned = set(ops[-1].operands)
    intermediates = sum(
        nbytes(r)
        for op in f.body.block.walk()
        if isinstance(op, MlvmOp)
        and not op.IS_DATA
        and not isinstance(op, ReshapeOp)
        for r in op.results
        if r not in returned and not _yielded(r)
    )
    arena = _int_attr(f, "mlvm.arena_bytes")
    bound = _int_attr(f, "mlvm.arena_lower_bound")
    return {
        "function": f.sym_name.data,
        "arena_bytes": arena,
        "lower_bound_bytes": bound,
        "arena_over_lower_bound": arena / bound if bound else 1.0,
        "intermediate_bytes": intermediates,
        "arena_over_intermediates": arena / intermediates if intermediates else 0.0,
        "num_ops": len(ops),
        "buffers": buffers,
    }


def module_report(module: ModuleOp) -> dict[str, Any]:
    return {
        "functions": [
            function_report(op)
            for op in module.ops
            if isinstance(op, func.FuncOp) and not op.is_declaration
        ]
    }


def summary_lines(report: dict[str, Any]) -> list[str]:
    out = []
    for fr in report["functions"]:
        out.append(
            f"@{fr['function']}: arena {fr['arena_bytes']} B, lower bound "
            f"{fr['lower_bound_bytes']} B (x{fr['arena_over_lower_bound']:.3f}), "
            f"intermediates {fr['intermediate_bytes']} B "
            f"(arena is {100 * fr['arena_over_intermediates']:.1f}% of them)"
        )
    return out


def nice_ticks(top: float, count: int = 6) -> list[float]:
    """Round tick values from 0 to at least `top` (steps of 1, 2 or 5 x 10^k)."""
    if top <= 0:
        return [0.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [k * step for k in range(int(math.ceil(top / step)) + 1)]


def byte_ticks(top: float) -> list[float]:
    """Ticks for a byte axis: round numbers of B, KiB, MiB or GiB."""
    unit = next((u for u in (1 << 30, 1 << 20, 1 << 10) if top >= 2 * u), 1)
    return [t * unit for t in nice_ticks(top / unit)]


def byte_label(b: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def _buffer_name(b: dict[str, Any]) -> str:
    return f"{b['value']} ({b['op'].removeprefix('mlvm.')})"


def to_svg(report: dict[str, Any]) -> str:
    """Buffers as rectangles over (op index x offset), named where they fit, with
    ticks on both axes; the lower bound as a dashed line."""
    width, panel_h, margin = 860, 340, 70
    panels: list[str] = []
    y0 = 0
    for fr in report["functions"]:
        n = max(fr["num_ops"], 1)
        top = max(fr["arena_bytes"], fr["lower_bound_bytes"], 1)
        sx = (width - 2 * margin) / n
        sy = (panel_h - 2 * margin) / top

        def X(i: float) -> float:
            return margin + i * sx

        def Y(b: float) -> float:
            return y0 + panel_h - margin - b * sy

        parts = [
            f'<text x="{margin}" y="{y0 + 20}" font-size="14">@{escape(fr["function"])}: '
            f'arena {fr["arena_bytes"]} B, lower bound {fr["lower_bound_bytes"]} B</text>',
            f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(n)}" y2="{Y(0)}" stroke="black"/>',
            f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(0)}" y2="{Y(top)}" stroke="black"/>',
            f'<text x="{X(n) - 60}" y="{Y(0) + 34}" font-size="11">op index</text>',
            f'<text x="5" y="{Y(top) - 10}" font-size="11">offset</text>',
        ]
        for t in nice_ticks(n):
            if t <= n:
                parts.append(
                    f'<line x1="{X(t):.2f}" y1="{Y(0)}" x2="{X(t):.2f}" y2="{Y(0) + 4}" stroke="black"/>'
                    f'<text x="{X(t):.2f}" y="{Y(0) + 16}" font-size="10" text-anchor="middle">{t:g}</text>'
                )
        for t in byte_ticks(top):
            if t <= top:
                parts.append(
                    f'<line x1="{X(0) - 4}" y1="{Y(t):.2f}" x2="{X(0)}" y2="{Y(t):.2f}" stroke="black"/>'
                    f'<text x="{X(0) - 6}" y="{Y(t) + 3:.2f}" font-size="10" '
                    f'text-anchor="end">{byte_label(t)}</text>'
                )
        for i, b in enumerate(fr["buffers"]):
            hue = (i * 47) % 360
            x, y = X(b["start"]), Y(b["offset"] + b["bytes"])
            w, h = max(sx * (b["end"] - b["start"] + 1), 1), max(sy * b["bytes"], 1)
            name = escape(_buffer_name(b))
            parts.append(
                f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" '
                f'fill="hsl({hue},60%,65%)" stroke="black" stroke-width="0.5"><title>{name}: '
                f'{b["bytes"]} B at {b["offset"]}, ops {b["start"]}..{b["end"]}</title></rect>'
            )
            if w >= 6 * len(name) and h >= 12:
                parts.append(f'<text x="{x + 3:.2f}" y="{y + 11:.2f}" font-size="10">{name}</text>')
        lb = Y(fr["lower_bound_bytes"])
        parts.append(
            f'<line x1="{X(0)}" y1="{lb:.2f}" x2="{X(n)}" y2="{lb:.2f}" stroke="red" '
            f'stroke-dasharray="6,3"/><text x="{X(n) - 90}" y="{lb - 4:.2f}" '
            f'font-size="11" fill="red">lower bound</text>'
        )
        panels.extend(parts)
        y0 += panel_h
    height = max(y0, panel_h)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(panels)
        + "\n</svg>\n"
    )


def write_png(report: dict[str, Any], path: Path) -> None:
    """The same plot as a PNG, drawn by matplotlib (the optional `plot` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MlvmError(
            f"{path}: error: a PNG plot needs matplotlib (pip install 'mlvm[plot]'); "
            "an .svg plot needs nothing"
        ) from None
    funcs = report["functions"] or [{"function": "(none)", "num_ops": 1, "arena_bytes": 0,
                                     "lower_bound_bytes": 0, "buffers": []}]
    fig, axes = plt.subplots(len(funcs), 1, figsize=(10, 3.6 * len(funcs)), squeeze=False)
    for ax, fr in zip(axes[:, 0], funcs, strict=True):
        n = max(fr["num_ops"], 1)
        top = max(fr["arena_bytes"], fr["lower_bound_bytes"], 1)
        for i, b in enumerate(fr["buffers"]):
            w = b["end"] - b["start"] + 1
            ax.add_patch(plt.Rectangle((b["start"], b["offset"]), w, b["bytes"],
                                       facecolor=plt.cm.tab20(i % 20), edgecolor="black", lw=0.5))
            if w / n > 0.12 and b["bytes"] / top > 0.06:
                ax.text(b["start"] + 0.1, b["offset"] + b["bytes"] / 2, _buffer_name(b),
                        fontsize=7, va="center")
        ax.axhline(fr["lower_bound_bytes"], color="red", ls="--", lw=1, label="lower bound")
        ax.set_xlim(0, n)
        ax.set_ylim(0, top * 1.05)
        ticks = [t for t in byte_ticks(top) if t <= top * 1.05]
        ax.set_yticks(ticks, [byte_label(t) for t in ticks])
        ax.set_xlabel("op index")
        ax.set_ylabel("offset")
        ax.set_title(f"@{fr['function']}: arena {fr['arena_bytes']} B, "
                     f"lower bound {fr['lower_bound_bytes']} B", fontsize=10)
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_plot(report: dict[str, Any], path: str | Path) -> None:
    """`--memory-plot`: SVG or PNG, by the file's suffix."""
    p = Path(path)
    if p.suffix.lower() == ".png":
        write_png(report, p)
    elif p.suffix.lower() == ".svg":
        p.write_text(to_svg(report))
    else:
        raise MlvmError(f"{p}: error: the memory plot is written as .svg or .png")
