"""The test kit's source task: ``test.poll.idle.ms`` makes an idle source that keeps polling."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.testing.recording import RecordingSourceConnector, RecordingSourceTask


class _Context:
    def __init__(self, config: dict[str, str]) -> None:
        self._config = config

    def configs(self) -> dict[str, str]:
        return self._config


def _task(connector_config: dict[str, str]) -> RecordingSourceTask:
    connector = RecordingSourceConnector()
    connector.initialize(_Context({"name": "idle", **connector_config}))
    connector.start({"name": "idle", **connector_config})
    task = RecordingSourceTask()
    task.initialize(_Context(connector.task_configs(2)[0]))
    return task


@pytest.mark.asyncio
async def test_idle_poll_sleeps_then_returns_nothing() -> None:
    task = _task({"test.poll.idle.ms": "20"})
    polls: list[Any] = [await asyncio.wait_for(task.poll(), 5) for _ in range(3)]
    assert polls == [None, None, None]


@pytest.mark.asyncio
async def test_without_the_key_poll_parks_until_cancelled() -> None:
    task = _task({})
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(task.poll(), 0.2)
