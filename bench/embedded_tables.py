"""What the embedded benchmarks (embedded.py, embedded_peers.py) share:
their start (arguments, the toolchain and emulator present) and writing a
table into bench/README.md between a section's markers."""

from __future__ import annotations

import argparse

from embedded.cortex_m import harness
from readme import write_readme  # noqa: F401 - the embedded scripts call it from here


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
