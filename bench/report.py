"""Where a benchmark's markdown goes: printed, and appended to BENCHMARKS.md when ``--append`` names it."""

from __future__ import annotations


def append_to(path: str | None, text: str) -> None:
    """Append ``text`` to the file at ``path``; nothing when no file was named."""
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)
