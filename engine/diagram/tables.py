"""The edges of a lifecycle machine, read from the same tables the machine is built from."""

from __future__ import annotations

from typing import Any

from states.connector import CONNECTOR_TRANSITIONS
from states.task import TASK_TRANSITIONS

KINDS: dict[str, list[dict[str, Any]]] = {"connector": CONNECTOR_TRANSITIONS, "task": TASK_TRANSITIONS}
INITIAL = "UNASSIGNED"
FINAL = "DESTROYED"


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
