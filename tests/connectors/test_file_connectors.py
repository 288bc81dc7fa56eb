"""FileStream-like source and sink: line records, byte-offset resume, batch size, partial lines."""

from __future__ import annotations

from pathlib import Path

from engine.api.context import SinkTaskContext, SourceTaskContext
from engine.api.records import SinkRecord
from engine.connectors.file import FileStreamSinkTask, FileStreamSourceTask
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


def test_a_missing_file_yields_nothing_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = source_task(path, MemoryOffsetStore())
    assert task.poll() is None
    path.write_text("hello\n")
    assert [r.value for r in task.poll() or []] == ["hello"]


def test_sink_appends_values_as_lines_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.initialize(SinkTaskContext({"file": str(path)}))
    task.start({"file": str(path)})
    task.put([SinkRecord(topic="t", kafka_partition=0, kafka_offset=n, value=f"v{n}") for n in range(3)])
    task.flush({})
    assert path.read_text() == "v0\nv1\nv2\n"
    task.stop()
