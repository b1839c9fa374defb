"""What the embedded benchmarks (embedded.py, embedded_peers.py) share:
their start (arguments, the toolchain and emulator present) and writing a
table into bench/README.md between a section's markers."""

from __future__ import annotations

import argparse
from pathlib import Path

from embedded.cortex_m import harness

README = Path(__file__).resolve().parent / "README.md"


def start(description: str) -> argparse.Namespace | None:
    """The command line (`--no-readme`), or None when the Cortex-M
    toolchain or qemu is missing (said on stdout)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    args = ap.parse_args()
    missing = harness.available()
    if missing is not None:
        print(f"not measured: {missing} (make sysdeps installs them)")
        return None
    return args


def write_readme(section: str, table: str) -> None:
    """table into README.md between <!-- section:begin --> and <!-- section:end -->."""
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    text = README.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f"{README}: no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    README.write_text(head + begin + "\n" + table + end + rest.split(end, 1)[1])
    print(f"wrote the table into {README}")
