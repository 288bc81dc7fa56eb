"""The cluster a file of source offsets was written for.

A standalone worker keeps its sources' offsets in a file (``offset.storage.file.filename``), outside
the cluster its records go to. Point the worker at another cluster (or move the demo from its
in-process topics to a broker) and the sources resume from offsets that say "sent" for records the new
cluster never received. The file cannot tell by itself, so the cluster id is kept beside it
(``<file>.cluster-id``); a worker that finds another id there logs one warning naming both, then keeps
the new one. The offsets are left as they are: resetting a source is the operator's call (KIP-875's
``DELETE /connectors/<name>/offsets``). Offsets on a Kafka topic live in the cluster itself.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import structlog

log = structlog.get_logger(component="storage")


def kept_beside(offsets_file: Path) -> Path:
    return offsets_file.with_name(offsets_file.name + ".cluster-id")


def check_target_cluster(offsets_file: Path, cluster_id: str) -> str | None:
    """Remember ``cluster_id`` beside ``offsets_file``; the id it replaced when that was another one."""
    path = kept_beside(offsets_file)
    previous = None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        previous = path.read_text(encoding="utf-8").strip() or None
    if previous == cluster_id:
        return None
    if previous is not None:
        log.warning(
            "storage.source_offsets_cluster_changed",
            offsets_file=str(offsets_file),
            stored_cluster_id=previous,
            cluster_id=cluster_id,
            hint="sources resume from these offsets: what they sent before is not in this cluster; "
            "DELETE /connectors/<name>/offsets (the connector stopped) starts one afresh",
        )
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cluster_id + "\n", encoding="utf-8")
    return previous
