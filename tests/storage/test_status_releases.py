"""A worker's UNASSIGNED read back from the status topic never replaces the status a newer owner
wrote (KAFKA-9184: a worker cut off from its group resumes after its work moved on)."""

from __future__ import annotations

import json

from engine.storage.status import MemoryStatusStore, Status


def _record(status: Status) -> bytes:
    return json.dumps(status.to_json()).encode()


def test_a_late_release_from_an_older_generation_leaves_the_owners_status() -> None:
    store = MemoryStatusStore()
    store.apply_record("status-task-sink-0", _record(Status("RUNNING", "w1:8083", 7)))
    store.apply_record("status-connector-sink", _record(Status("RUNNING", "w1:8083", 7)))
    # the resumed worker stops its copy and writes what it ran in: generation 5
    store.apply_record("status-task-sink-0", _record(Status("UNASSIGNED", "w2:8083", 5)))
    store.apply_record("status-connector-sink", _record(Status("UNASSIGNED", "w2:8083", 5)))
    assert store.tasks("sink")[0] == Status("RUNNING", "w1:8083", 7)
    assert store.connector("sink") == Status("RUNNING", "w1:8083", 7)


def test_releases_of_the_same_worker_or_a_newer_generation_are_read() -> None:
    store = MemoryStatusStore()
    store.apply_record("status-task-sink-0", _record(Status("RUNNING", "w1:8083", 7)))
    store.apply_record("status-task-sink-0", _record(Status("UNASSIGNED", "w1:8083", 7)))
    assert store.tasks("sink")[0].state == "UNASSIGNED"  # its own release: a plain rebalance
    store.apply_record("status-task-sink-0", _record(Status("RUNNING", "w2:8083", 8)))
    store.apply_record("status-task-sink-0", _record(Status("UNASSIGNED", "w3:8083", 8)))
    assert store.tasks("sink")[0] == Status("UNASSIGNED", "w3:8083", 8)  # same generation: read
    # any other state from an older generation is read as Connect reads it (a restarted group
    # starts its generations again)
    store.apply_record("status-task-sink-0", _record(Status("RUNNING", "w1:8083", 1)))
    assert store.tasks("sink")[0] == Status("RUNNING", "w1:8083", 1)
