"""What the internal topics' readers take: Jackson's nesting bound, and statuses and offsets checked
as Connect's readers check them (a refused record is skipped by the reader, never fatal)."""

from __future__ import annotations

import json

import pytest

from engine.storage import record_json
from engine.storage.kafka_offsets import KafkaOffsetStore
from engine.storage.status import MemoryStatusStore, Status


@pytest.mark.parametrize("depth", [1001, 100_000])
def test_nesting_past_jacksons_bound_is_a_value_error(depth: int) -> None:
    with pytest.raises(ValueError, match="nested deeper than 1000 levels"):
        record_json.loads(b"[" * depth + b"]" * depth)


def test_brackets_inside_strings_do_not_count_and_ordinary_records_parse() -> None:
    quoted = json.dumps({"trace": "[" * 5000, "nested": [[{"a": [1]}]]})
    assert record_json.loads(quoted) == json.loads(quoted)
    assert record_json.loads('{"state":"RUNNING"}') == {"state": "RUNNING"}


@pytest.mark.parametrize(
    "value",
    [
        b"null",
        b"[1]",
        b'{"state": "EXPLODED", "worker_id": "nobody:1", "generation": 1}',
        b'{"state": "RUNNING", "worker_id": 7}',
        b'{"state": "RUNNING", "worker_id": "w:1", "generation": "2"}',
        b'{"state": "RUNNING", "worker_id": "w:1", "trace": 5}',
    ],
)
def test_a_status_connect_would_not_read_is_refused_and_the_last_good_one_kept(value: bytes) -> None:
    store = MemoryStatusStore()
    good = json.dumps(Status("RUNNING", "w:1", 3).to_json()).encode()
    store.apply_record("status-task-c-0", good)
    with pytest.raises((ValueError, TypeError)):
        store.apply_record("status-task-c-0", value)
    assert store.tasks("c") == {0: Status("RUNNING", "w:1", 3)}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ('["c", {"f": "x"}]', b"[" * 2000 + b"]" * 2000),
        ('["c", {"f": "x"}]', b"null"),
        ('["c", {"f": "x"}]', b"[1, 2]"),
        ("not json", b"{}"),
        ('{"an": "object"}', b"{}"),
        ('["c"]', b"{}"),
    ],
)
def test_an_offset_record_connect_would_not_read_is_refused(key: str, value: bytes) -> None:
    store = KafkaOffsetStore("127.0.0.1:1", "offsets")  # never opened: only its reader is used
    with pytest.raises((ValueError, TypeError)):
        store._apply(key, value)
    assert store.partitions("c") == []
