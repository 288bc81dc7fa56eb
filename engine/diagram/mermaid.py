"""Mermaid ``stateDiagram-v2`` text, so READMEs and docs render the machines as declared."""

from __future__ import annotations

from engine.diagram.tables import FINAL, INITIAL, edges


def mermaid(kind: str) -> str:
    """The ``kind`` ("connector" or "task") machine as Mermaid; one edge per (source, dest), table order."""
    lines = ["stateDiagram-v2", f"    [*] --> {INITIAL}"]
    lines += [f"    {source} --> {dest}: {', '.join(triggers)}" for source, dest, triggers in edges(kind)]
    lines.append(f"    {FINAL} --> [*]")
    return "\n".join(lines) + "\n"
