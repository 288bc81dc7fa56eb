"""A standalone worker's file of source offsets remembers the cluster it was written for, and says so
when the worker now writes to another (the demo moved from its in-process topics to a broker)."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from engine import Engine
from engine.topics.memory import MemoryTopics


async def test_source_offsets_of_another_cluster_are_reported_once(tmp_path: Path) -> None:
    offsets = tmp_path / "offsets"
    worker = {"offset.storage.file.filename": str(offsets)}
    first = MemoryTopics(tmp_path / "first.jsonl")
    async with Engine(worker, topics=first):
        pass
    with capture_logs() as logged:
        async with Engine(worker, topics=first):  # the same cluster: nothing to say
            pass
    assert not [e for e in logged if e["event"] == "storage.source_offsets_cluster_changed"]
    second = MemoryTopics(tmp_path / "second.jsonl")
    with capture_logs() as logged:
        async with Engine(worker, topics=second):
            pass
        async with Engine(worker, topics=second):  # said once: the file now names the new cluster
            pass
    warnings = [e for e in logged if e["event"] == "storage.source_offsets_cluster_changed"]
    assert len(warnings) == 1
    assert warnings[0]["log_level"] == "warning"
    assert (warnings[0]["stored_cluster_id"], warnings[0]["cluster_id"]) == (
        first.cluster_id,
        second.cluster_id,
    )
    assert (tmp_path / "offsets.cluster-id").read_text().strip() == second.cluster_id


async def test_topics_that_end_with_the_process_are_not_a_cluster_to_check(tmp_path: Path) -> None:
    """A standalone worker on in-memory topics gets new ones at every start: nothing to warn about."""
    worker = {"offset.storage.file.filename": str(tmp_path / "offsets")}
    with capture_logs() as logged:
        for _ in range(2):
            async with Engine(worker, topics=MemoryTopics()):
                pass
    assert not [e for e in logged if e["event"] == "storage.source_offsets_cluster_changed"]
    assert not (tmp_path / "offsets.cluster-id").exists()
