"""Writing a benchmark's results into bench/README.md between a section's
markers (<!-- section:begin --> ... <!-- section:end -->)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def write_readme(section: str, table: str, missing_ok: bool = False) -> None:
    """table into README.md between <!-- section:begin --> and <!-- section:end -->
    (with `missing_ok`, nothing when the README or the markers are not there)."""
    begin, end = f"<!-- {section}:begin -->", f"<!-- {section}:end -->"
    text = README.read_text() if README.exists() else ""
    if begin not in text or end not in text:
        if missing_ok:
            return
        raise SystemExit(f"{README}: no {begin} ... {end} markers")
    head, rest = text.split(begin, 1)
    README.write_text(head + begin + "\n" + table + end + rest.split(end, 1)[1])
    print(f"wrote the table into {README}")
