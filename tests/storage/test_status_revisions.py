"""Each connector's revision moves with every change of its statuses, written here or read back,
and only with those: ``GET /connectors?expand=status`` keeps each connector's part until it moves."""

from __future__ import annotations

import json

from engine.storage.status import MemoryStatusStore, Status


def test_a_connectors_revision_moves_with_its_own_statuses_only() -> None:
    store = MemoryStatusStore()
    assert (store.revision, store.revision_of("a")) == (0, 0)
    store.put_connector("a", Status("RUNNING", "w1"))
    store.put_connector("b", Status("RUNNING", "w1"))
    seen_a, seen_b = store.revision_of("a"), store.revision_of("b")
    assert 0 < seen_a < seen_b == store.revision
    store.put_task("a", 0, Status("RUNNING", "w1"))
    assert store.revision_of("a") > seen_b
    assert store.revision_of("b") == seen_b
    seen_a = store.revision_of("a")
    store.remove_task("a", 5)  # nothing there: nothing changed
    assert store.revision_of("a") == seen_a
    store.apply_record("status-task-a-0", json.dumps(Status("FAILED", "w2").to_json()).encode())
    assert store.revision_of("a") > seen_a
    revision = store.revision
    store.remove_connector("a")  # its revision is forgotten (the store's still moves)
    assert (store.revision_of("a"), store.revision_of("b")) == (0, seen_b)
    assert store.revision > revision
    store.put_connector("a", Status("RUNNING", "w3"))  # created again
    assert store.revision_of("a") == store.revision
