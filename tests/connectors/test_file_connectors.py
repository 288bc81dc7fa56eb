"""The FileStream twins: line records, byte-offset resume, batch size, partial lines, Java's line ends,
config keys and offset checks (connect-file's ``FileStreamSourceConnector``/``FileStreamSinkConnector``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.api import ConnectException, ExactlyOnceSupport
from engine.api.context import SinkTaskContext, SourceTaskContext
from engine.api.records import SinkRecord
from engine.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)
from engine.data import Schema
from engine.storage.offsets import MemoryOffsetStore


def source_task(path: Path, offsets: MemoryOffsetStore, batch: int = 2000) -> FileStreamSourceTask:
    props = {"file": str(path), "topic": "lines", "batch.size": str(batch)}
    task = FileStreamSourceTask()
    task.initialize(SourceTaskContext(props, offset_reader=offsets.reader("files")))
    task.start(props)
    return task


def test_lines_become_records_with_byte_offsets_and_a_partial_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntwo\r\nthr")
    task = source_task(path, MemoryOffsetStore())
    records = task.poll() or []
    assert [r.value for r in records] == ["one", "two"]
    assert [r.source_offset for r in records] == [{"position": 4}, {"position": 9}]
    assert records[0].source_partition == {"filename": str(path)}
    assert records[0].topic == "lines"
    assert task.poll() is None  # "thr" has no newline yet
    with path.open("a") as f:
        f.write("ee\n")
    assert [r.value for r in task.poll() or []] == ["three"]
    task.stop()


def test_lines_end_as_in_java_at_lf_cr_or_crlf_and_values_are_strings(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\rb\r\nc\nd\r")
    task = source_task(path, MemoryOffsetStore())
    records = task.poll() or []
    assert [r.value for r in records] == ["a", "b", "c"]
    assert [r.source_offset for r in records] == [{"position": 2}, {"position": 5}, {"position": 7}]
    assert records[0].value_schema == Schema.STRING_SCHEMA
    assert task.poll() is None  # "d\r" may still become "d\r\n"
    with path.open("ab") as f:
        f.write(b"e\n")
    assert [r.value for r in task.poll() or []] == ["d", "e"]
    task.stop()


def test_config_and_offset_checks_are_connects() -> None:
    connector = FileStreamSourceConnector()
    keys = {k.name: k for k in connector.config().config_keys.values()}
    assert keys["file"].default is None
    assert keys["topic"].type.name == "STRING"
    config = {"file": "/tmp/x", "topic": "t"}
    assert connector.alter_offsets(config, {json.dumps({"filename": "/tmp/x"}): {"position": 3}}) is True
    with pytest.raises(ConnectException, match="expected to be a Long value"):
        connector.alter_offsets(config, {json.dumps({"filename": "/tmp/x"}): {"position": "3"}})
    with pytest.raises(ConnectException, match="should contain the key 'filename'"):
        connector.alter_offsets(config, {json.dumps({"nope": 1}): {"position": 3}})
    with pytest.raises(ConnectException, match="stdin is used for input"):
        connector.alter_offsets({"topic": "t"}, {})
    assert connector.exactly_once_support(config) == ExactlyOnceSupport.SUPPORTED
    assert connector.exactly_once_support({"topic": "t"}) == ExactlyOnceSupport.UNSUPPORTED
    assert FileStreamSinkConnector().alter_offsets({}, {}) is True


def test_batch_size_and_resume_from_the_committed_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {n}\n" for n in range(5)))
    offsets = MemoryOffsetStore()
    first = source_task(path, offsets, batch=2)
    batch = first.poll() or []
    assert [r.value for r in batch] == ["line 0", "line 1"]
    offsets.write("files", [(batch[-1].source_partition, batch[-1].source_offset)])
    resumed = source_task(path, offsets, batch=10)
    assert [r.value for r in resumed.poll() or []] == ["line 2", "line 3", "line 4"]
    first.stop()
    resumed.stop()


def test_a_missing_file_yields_nothing_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = source_task(path, MemoryOffsetStore())
    assert task.poll() is None
    path.write_text("hello\n")
    assert [r.value for r in task.poll() or []] == ["hello"]
    task.stop()


def test_sink_appends_values_as_lines_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.initialize(SinkTaskContext({"file": str(path)}))
    task.start({"file": str(path)})
    task.put([SinkRecord(topic="t", kafka_partition=0, kafka_offset=n, value=f"v{n}") for n in range(3)])
    assert path.read_text() == "v0\nv1\nv2\n"  # written through, as Java's PrintStream does: no commit needed
    task.put([SinkRecord(topic="t", kafka_partition=0, kafka_offset=3, value=None)])
    assert path.read_text() == "v0\nv1\nv2\nnull\n"
    task.flush({})
    assert path.read_text() == "v0\nv1\nv2\nnull\n"
    task.stop()
