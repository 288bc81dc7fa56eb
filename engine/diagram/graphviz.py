"""Graphviz DOT for the machines, and SVG/PNG rendering when Graphviz's ``dot`` is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from engine.diagram.tables import FINAL, INITIAL, edges
from engine.errors import EngineError

FORMATS = ("svg", "png")


class GraphvizMissing(EngineError):
    """Rendering needs Graphviz's ``dot`` on PATH."""

    def __init__(self) -> None:
        super().__init__("Graphviz is not installed ('dot' is not on PATH): install it with "
                         "`apt install graphviz` (or `brew install graphviz`), or use the Mermaid output")


def dot(kind: str) -> str:
    """The ``kind`` machine as DOT source, edge for edge the same as :func:`mermaid` (needs no Graphviz)."""
    lines = [f'digraph "{kind}" {{', "    rankdir=LR;", '    node [shape=box, style=rounded, fontname="Helvetica"];',
             '    edge [fontname="Helvetica", fontsize=10];', '    start [shape=point];',
             f'    {FINAL} [shape=doubleoctagon];', f"    start -> {INITIAL};"]
    lines += [f'    {source} -> {dest} [label="{", ".join(triggers)}"];' for source, dest, triggers in edges(kind)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(kind: str, path: str | Path, fmt: str) -> None:
    """Write the machine as ``fmt`` (svg or png) to ``path`` with Graphviz.

    Arguments are checked before the binary, so a typo is reported as such even without Graphviz.
    """
    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    source = dot(kind)
    binary = shutil.which("dot")
    if binary is None:
        raise GraphvizMissing
    result = subprocess.run([binary, f"-T{fmt}", "-o", str(path)], input=source.encode(),
                            capture_output=True, check=False)
    if result.returncode != 0:
        raise EngineError(f"Graphviz failed: {result.stderr.decode(errors='replace').strip()}")
