"""An embedded engine per test, with short shutdown windows so hang tests stay quick."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine import Engine
from engine.testing import CALLS

FAST = {
    "task.shutdown.graceful.timeout.ms": "500",
    "connector.shutdown.graceful.timeout.ms": "500",
    "connector.deleted.timeout.ms": "1000",
}
SOURCE = "engine.testing.RecordingSourceConnector"
SINK = "engine.testing.RecordingSinkConnector"


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    async with Engine(FAST) as running:
        yield running


def source(tasks: int = 2, **extra: str) -> dict[str, str]:
    return {"connector.class": SOURCE, "tasks.max": str(tasks), **extra}
