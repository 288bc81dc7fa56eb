"""Recording connectors that also keep the props each ``start`` received (config-provider tests)."""

from __future__ import annotations

import threading
from collections.abc import Collection

from engine.api import ConnectException, DataException, SinkRecord
from engine.testing import (
    RecordingSinkConnector,
    RecordingSinkTask,
    RecordingSourceConnector,
    RecordingSourceTask,
)

_lock = threading.Lock()
STARTS: dict[str, list[dict[str, str]]] = {}
"""Unit (``connector``, ``task-N``) -> the props of each ``start``, in order."""


def _keep(unit: str, props: dict[str, str]) -> None:
    with _lock:
        STARTS.setdefault(unit, []).append(dict(props))


class PropsSourceTask(RecordingSourceTask):
    def start(self, props: dict[str, str]) -> None:
        _keep(self._unit, props)
        super().start(props)


class PropsSourceConnector(RecordingSourceConnector):
    task_type = PropsSourceTask

    def start(self, props: dict[str, str]) -> None:
        _keep("connector", props)
        super().start(props)


class LeakySourceConnector(PropsSourceConnector):
    """Its start() fails quoting the password it was given, as a client library's login error may."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        raise ConnectException(f"login refused for password {props['test.db.password']}")


class LeakySinkTask(RecordingSinkTask):
    """Reports every record as errant, with an error that quotes its password."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self._password = props["test.db.password"]

    async def put(self, records: Collection[SinkRecord]) -> None:
        reporter = self.context.errant_record_reporter()
        for record in records:
            reporter.report(record, DataException(f"rejected with password {self._password}"))


class LeakySinkConnector(RecordingSinkConnector):
    task_type = LeakySinkTask
