"""Recording connectors that also keep the props each ``start`` received (config-provider tests)."""

from __future__ import annotations

import threading

from engine.testing import RecordingSourceConnector, RecordingSourceTask

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
