"""Test connectors for task processes (``task.processes``), imported by the task hosts through the
worker's ``PYTHONPATH``: a FileStream sink that marks its deletion stop, and tasks that crash their
process (a segfault, ``os._exit(3)``), ignore ``stop()`` or grow without bound."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from engine.api import ExactlyOnceSupport, SourceConnector, SourceRecord, SourceTask, Task
from engine.connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask

# test.trigger.file: the misbehaving sources misbehave only once this file exists
TRIGGER = "test.trigger.file"
MARKER = "test.marker.file"


class MarkingSinkTask(FileStreamSinkTask):
    """A FileStream sink task writing to a file of its own (``<file>.<pid>.<instance>``: processes never
    share one), and appending ``deleted <pid>`` to ``test.marker.file`` in ``stop(connector_deleted=True)``."""

    java_class: ClassVar[str | None] = None  # its own name in task configs, not FileStream's

    def start(self, props: dict[str, str]) -> None:
        self._marker = props.get(MARKER)
        super().start({**props, "file": f"{props['file']}.{os.getpid()}.{id(self)}"})

    def stop(self, connector_deleted: bool = False) -> None:
        super().stop(connector_deleted)
        if connector_deleted and self._marker:
            with open(self._marker, "a", encoding="utf-8") as marker:
                marker.write(f"deleted {os.getpid()}\n")


class MarkingSinkConnector(FileStreamSinkConnector):
    java_class: ClassVar[str | None] = None

    def task_class(self) -> type[Task]:
        return MarkingSinkTask


def sink_lines(prefix: Path) -> list[str]:
    """Every line the marking sink's tasks wrote for ``file=prefix``."""
    return [
        line
        for path in prefix.parent.glob(prefix.name + ".*")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


class _TriggeredSourceTask(SourceTask):
    """Polls nothing until ``test.trigger.file`` exists, then misbehaves (``act``)."""

    def start(self, props: dict[str, str]) -> None:
        self._trigger = Path(props[TRIGGER])
        self._idle = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self._trigger.exists():
            self.act()
        self._idle.wait(0.05)
        return None

    def act(self) -> None:
        raise NotImplementedError

    def stop(self, connector_deleted: bool = False) -> None:
        self._idle.set()

    def version(self) -> str:
        return "1.0.0"


class SegfaultTask(_TriggeredSourceTask):
    def act(self) -> None:
        ctypes.string_at(0)  # reads address 0: SIGSEGV


class ExitTask(_TriggeredSourceTask):
    def act(self) -> None:
        os._exit(3)


class StopIgnoringTask(_TriggeredSourceTask):
    """Its ``stop()`` never returns (a task wedged in native code, say)."""

    def act(self) -> None:
        return None

    def stop(self, connector_deleted: bool = False) -> None:
        threading.Event().wait()


class MemoryHogTask(_TriggeredSourceTask):
    """Keeps 32 MiB more resident at each poll (written, so the pages are real), up to 8 GiB: it stops
    only when something kills its process."""

    CHUNK = 32 << 20

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._hoard: list[bytes] = []

    def act(self) -> None:
        if len(self._hoard) * self.CHUNK < 8 << 30:
            self._hoard.append(b"\x01" * self.CHUNK)


class _OneTaskSource(SourceConnector):
    task: type[Task]

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def version(self) -> str:
        return "1.0.0"


class SegfaultConnector(_OneTaskSource):
    task = SegfaultTask


class ExitConnector(_OneTaskSource):
    task = ExitTask


class StopIgnoringConnector(_OneTaskSource):
    task = StopIgnoringTask


class MemoryHogConnector(_OneTaskSource):
    task = MemoryHogTask


class CountingTask(SourceTask):
    """Writes ``v-1`` .. ``v-<count>`` to ``topic``, five a poll every 0.1 s, resuming after its committed
    offset (``{"n": <last written>}``)."""

    def start(self, props: dict[str, str]) -> None:
        self._topic, self._count = props["topic"], int(props["count"])
        committed = self.context.offset_storage_reader().offset({"p": 0})
        self._next = (committed or {}).get("n", 0) + 1
        self._idle = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        self._idle.wait(0.1)
        batch = range(self._next, min(self._next + 5, self._count + 1))
        self._next += len(batch)
        return [
            SourceRecord(topic=self._topic, value=f"v-{n}", source_partition={"p": 0}, source_offset={"n": n})
            for n in batch
        ] or None

    def stop(self, connector_deleted: bool = False) -> None:
        self._idle.set()

    def version(self) -> str:
        return "1.0.0"


class CountingConnector(_OneTaskSource):
    task = CountingTask

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED
