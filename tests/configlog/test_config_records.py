"""The config-topic codec and snapshot: Connect's keys and JSON, the commit protocol, bad records."""

from __future__ import annotations

import json

import pytest

from engine.configlog import (
    ConnectorConfigRecord,
    ConnectorTombstone,
    LoggerLevelRecord,
    PendingCleanupCleared,
    PendingCleanupRecord,
    RestartRecord,
    SessionKeyRecord,
    TargetStateRecord,
    TargetStateTombstone,
    TaskCommitRecord,
    TaskConfigRecord,
    TaskCountRecord,
    TaskRestartRecord,
    decode,
    encode,
)
from engine.configlog.snapshot import ConfigSnapshot, ConnectorRemoved, TasksCommitted
from engine.errors import CorruptRecord
from states import TargetState

RECORDS = [
    ConnectorConfigRecord("my-conn", {"connector.class": "X", "tasks.max": "2"}),
    ConnectorTombstone("my-conn"),
    TaskConfigRecord("my-conn", 7, {"k": "v"}),
    TaskCommitRecord("my-conn", 2),
    TargetStateRecord("my-conn", TargetState.STOPPED),
    TargetStateTombstone("my-conn"),
    RestartRecord("my-conn", include_tasks=True, only_failed=False),
    TaskRestartRecord("my-conn", 1),
    PendingCleanupRecord("my-conn", {"a": "b"}, 3),
    PendingCleanupCleared("my-conn"),
    SessionKeyRecord(b"\x01\x02secret", "HmacSHA256", 1),
    TaskCountRecord("my-conn", 3),
    LoggerLevelRecord("org.apache.kafka.connect", "DEBUG"),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_kind_round_trips(record: object) -> None:
    key, value = encode(record)  # type: ignore[arg-type]
    assert decode(key, value) == record


def test_keys_and_values_match_kafka_connect() -> None:
    assert encode(ConnectorConfigRecord("c", {"a": "1"})) == ("connector-c", b'{"properties":{"a":"1"}}')
    assert encode(TaskConfigRecord("c", 0, {})) == ("task-c-0", b'{"properties":{}}')
    assert encode(TaskCommitRecord("c", 2)) == ("commit-c", b'{"tasks":2}')
    assert encode(RestartRecord("c", True, True)) == (
        "restart-connector-c",
        b'{"include-tasks":true,"only-failed":true}',
    )
    assert encode(LoggerLevelRecord("org.x", "WARN")) == ("logger-cluster-org.x", b'{"level":"WARN"}')
    assert encode(TaskCountRecord("c", 2)) == ("tasks-fencing-c", b'{"task-count":2}')
    assert encode(SessionKeyRecord(b"key", "HmacSHA256", 5)) == (
        "session-key",
        b'{"key":"a2V5","algorithm":"HmacSHA256","creation-timestamp":5}',
    )


def test_connects_session_key_record_is_read_and_a_malformed_one_skipped() -> None:
    """KafkaConfigBackingStore.putSessionKey's JSON (schemas off); a bad one is logged and ignored."""
    value = b'{"key":"c2VjcmV0c2VjcmV0","algorithm":"HmacSHA256","creation-timestamp":1718000000000}'
    assert decode("session-key", value) == SessionKeyRecord(b"secretsecret", "HmacSHA256", 1718000000000)
    for bad in (
        None,
        b'{"key":3,"algorithm":"HmacSHA256","creation-timestamp":1}',
        b'{"key":"a2V5","algorithm":"HmacSHA256","creation-timestamp":"x"}',
        b'{"key":"!!"}',
    ):
        with pytest.raises(CorruptRecord):
            decode("session-key", bad)


def test_task_count_records_end_a_pending_fencing_and_task_configs_start_one() -> None:
    snapshot = ConfigSnapshot()
    snapshot.apply(ConnectorConfigRecord("c", {}), 0)
    snapshot.apply(TaskConfigRecord("c", 0, {}), 1)
    snapshot.apply(TaskCommitRecord("c", 1), 2)
    assert snapshot.pending_fencing == {"c"}
    snapshot.apply(decode("tasks-fencing-c", b'{"task-count":1}'), 3)
    assert (snapshot.pending_fencing, snapshot.task_count_records) == (set(), {"c": 1})
    snapshot.apply(
        decode("session-key", b'{"key":"a2V5","algorithm":"HmacSHA256","creation-timestamp":7}'), 4
    )
    assert snapshot.session_key == SessionKeyRecord(b"key", "HmacSHA256", 7)


@pytest.mark.parametrize("value", [None, b'{"level":3}', b"{}"])
def test_a_malformed_cluster_log_level_is_skipped_as_connect_ignores_it(value: bytes | None) -> None:
    with pytest.raises(CorruptRecord, match="logging level"):
        decode("logger-cluster-org.x", value)


def test_stopped_target_state_is_written_as_paused_for_old_workers() -> None:
    _, value = encode(TargetStateRecord("c", TargetState.STOPPED))
    assert json.loads(value or b"") == {"state": "PAUSED", "state.v2": "STOPPED"}


def test_v0_target_state_without_state_v2_is_read() -> None:
    assert decode("target-state-c", b'{"state":"PAUSED"}') == TargetStateRecord("c", TargetState.PAUSED)


def test_connector_names_with_dashes_keep_the_task_number_last() -> None:
    assert decode("task-a-b-c-12", b'{"properties":{}}') == TaskConfigRecord("a-b-c", 12, {})


def test_malformed_restart_flags_default_to_false() -> None:
    assert decode("restart-connector-c", b'{"include-tasks":"yes"}') == RestartRecord("c", False, False)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("connector-c", b"not json"),
        ("connector-c", b"[1, 2]"),
        ("connector-c", b'{"properties": {"a": 1}}'),
        ("connector-c", b'{"nothing": true}'),
        ("connector-c", b"\xff\xfe"),
        ("task-c-x", b'{"properties": {}}'),
        ("task-c-0", None),
        ("commit-c", b'{"tasks": -1}'),
        ("commit-c", b'{"tasks": "2"}'),
        ("target-state-c", b'{"state": "SLEEPING"}'),
        ("connector-", b'{"properties": {}}'),
        ("something-else", b"{}"),
    ],
)
def test_malformed_records_raise_corrupt_record(key: str, value: bytes | None) -> None:
    with pytest.raises(CorruptRecord):
        decode(key, value)


def test_task_configs_apply_only_on_their_commit() -> None:
    snapshot = ConfigSnapshot()
    snapshot.apply(ConnectorConfigRecord("c", {}))
    assert snapshot.apply(TaskConfigRecord("c", 0, {"n": "0"})) is None
    assert snapshot.apply(TaskConfigRecord("c", 1, {"n": "1"})) is None
    assert snapshot.tasks.get("c") is None
    event = snapshot.apply(TaskCommitRecord("c", 2))
    assert event == TasksCommitted("c", ({"n": "0"}, {"n": "1"}))
    assert snapshot.applied["c"] == {}


def test_commit_missing_a_task_config_marks_the_connector_inconsistent() -> None:
    snapshot = ConfigSnapshot()
    snapshot.apply(ConnectorConfigRecord("c", {}))
    snapshot.apply(TaskConfigRecord("c", 1, {}))
    assert snapshot.apply(TaskCommitRecord("c", 2)) is None
    assert "c" in snapshot.inconsistent
    assert "c" not in snapshot.tasks


def test_initial_target_state_written_before_the_config_is_kept() -> None:
    snapshot = ConfigSnapshot()
    assert snapshot.apply(TargetStateRecord("c", TargetState.PAUSED)) is None
    event = snapshot.apply(ConnectorConfigRecord("c", {}))
    assert getattr(event, "target", None) is TargetState.PAUSED


def test_tombstone_forgets_task_configs_so_a_recreated_connector_starts_clean() -> None:
    snapshot = ConfigSnapshot()
    snapshot.apply(ConnectorConfigRecord("c", {}))
    snapshot.apply(TaskConfigRecord("c", 0, {}))
    snapshot.apply(TaskCommitRecord("c", 1))
    assert snapshot.apply(ConnectorTombstone("c")) == ConnectorRemoved("c")
    assert snapshot.apply(ConnectorTombstone("c")) is None
    snapshot.apply(ConnectorConfigRecord("c", {}))
    assert snapshot.tasks.get("c") is None


def test_commit_for_a_deleted_connector_does_not_resurrect_it() -> None:
    snapshot = ConfigSnapshot()
    snapshot.apply(TaskConfigRecord("gone", 0, {}))
    assert snapshot.apply(TaskCommitRecord("gone", 1)) is None
    assert "gone" not in snapshot.connectors


def test_a_non_empty_commit_for_a_stopped_connector_is_refused() -> None:
    from engine.configlog.records import (
        ConnectorConfigRecord,
        TargetStateRecord,
        TaskCommitRecord,
        TaskConfigRecord,
    )
    from engine.configlog.snapshot import ConfigSnapshot
    from states import TargetState

    snapshot = ConfigSnapshot()
    snapshot.apply(ConnectorConfigRecord("c", {"connector.class": "x"}))
    snapshot.apply(TaskCommitRecord("c", 0))
    snapshot.apply(TargetStateRecord("c", TargetState.STOPPED))
    snapshot.apply(TaskConfigRecord("c", 0, {"a": "1"}))  # written by a reconfiguration that raced the stop
    assert snapshot.apply(TaskCommitRecord("c", 1)) is None
    assert snapshot.tasks["c"] == ()
    snapshot.apply(TargetStateRecord("c", TargetState.STARTED))
    snapshot.apply(TaskConfigRecord("c", 0, {"a": "1"}))
    assert snapshot.apply(TaskCommitRecord("c", 1)) is not None
    assert list(snapshot.tasks["c"]) == [{"a": "1"}]


def test_a_value_nested_past_jacksons_bound_is_a_corrupt_record_not_a_crash() -> None:
    """A record nested 100,000 deep once ended every worker with a RecursionError, after every restart."""
    deep = b'{"properties": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(CorruptRecord, match="nested deeper than 1000 levels"):
        decode("connector-deep", deep)
