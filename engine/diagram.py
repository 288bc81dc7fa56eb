"""Pictures of the lifecycle machines, drawn from the same tables the machines are built from.

Mermaid ``stateDiagram-v2`` text lets READMEs and docs render the machines as declared; DOT
source needs no Graphviz, and only :func:`render` (SVG/PNG) calls Graphviz's ``dot``. Both
outputs come from :func:`edges`, so they agree edge for edge. Scenario timelines are drawn by
``engine.scenario.timeline``, since they picture a trace rather than a machine.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from states.connector import CONNECTOR_TRANSITIONS
from states.task import TASK_TRANSITIONS

__all__ = ["KINDS", "GraphvizMissing", "dot", "edges", "mermaid", "render"]

KINDS: dict[str, list[dict[str, Any]]] = {"connector": CONNECTOR_TRANSITIONS, "task": TASK_TRANSITIONS}
INITIAL = "UNASSIGNED"
FINAL = "DESTROYED"
FORMATS = ("svg", "png")


class GraphvizMissing(EngineError):
    """Rendering needs Graphviz's ``dot`` on PATH."""

    def __init__(self) -> None:
        super().__init__(
            "Graphviz is not installed ('dot' is not on PATH): install it with "
            "`apt install graphviz` (or `brew install graphviz`), or use the Mermaid output"
        )


def edges(kind: str) -> list[tuple[str, str, list[str]]]:
    """``(source, dest, triggers)`` in table order; triggers sharing an edge are joined."""
    table = KINDS.get(kind)
    if table is None:
        raise ValueError(f"Unknown machine {kind!r}; valid kinds: {', '.join(KINDS)}")
    merged: dict[tuple[str, str], list[str]] = {}
    for row in table:
        sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
        for source in sources:
            merged.setdefault((str(source), str(row["dest"])), []).append(row["trigger"])
    return [(source, dest, triggers) for (source, dest), triggers in merged.items()]


def mermaid(kind: str) -> str:
    """The ``kind`` ("connector" or "task") machine as Mermaid; one edge per (source, dest), table order."""
    lines = ["stateDiagram-v2", f"    [*] --> {INITIAL}"]
    lines += [f"    {source} --> {dest}: {', '.join(triggers)}" for source, dest, triggers in edges(kind)]
    lines.append(f"    {FINAL} --> [*]")
    return "\n".join(lines) + "\n"


def dot(kind: str) -> str:
    """The ``kind`` machine as DOT source, edge for edge the same as :func:`mermaid` (needs no Graphviz)."""
    lines = [
        f'digraph "{kind}" {{',
        "    rankdir=LR;",
        '    node [shape=box, style=rounded, fontname="Helvetica"];',
        '    edge [fontname="Helvetica", fontsize=10];',
        "    start [shape=point];",
        f"    {FINAL} [shape=doubleoctagon];",
        f"    start -> {INITIAL};",
    ]
    lines += [
        f'    {source} -> {dest} [label="{", ".join(triggers)}"];' for source, dest, triggers in edges(kind)
    ]
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
    result = subprocess.run(
        [binary, f"-T{fmt}", "-o", str(path)], input=source.encode(), capture_output=True, check=False
    )
    if result.returncode != 0:
        raise EngineError(f"Graphviz failed: {result.stderr.decode(errors='replace').strip()}")
