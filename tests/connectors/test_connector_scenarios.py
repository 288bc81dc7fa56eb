"""The lifecycle scenarios of the CDC source and the RabbitMQ sink (scenarios/connectors/), run against
the real servers, with what they provision checked in the servers: present while the scenario runs
(sampled), gone once it has deleted the connector. The ``expect`` steps check states and cleanups;
the format has no verb for a server's objects, so this test does that part."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from engine.scenario.model import load_scenario
from engine.scenario.runner import ScenarioRunner
from tests.connectors.cdc_support import CdcTable
from tests.connectors.rabbitmq_support import delete_all, exists, unique
from tests.postgres_server import LogicalPostgres
from tests.scenario.conftest import SCENARIO_DIR
from tests.session_services import rabbitmq_url

pytestmark = pytest.mark.integration  # the session's RabbitMQ node and PostgreSQL

SCENARIOS = SCENARIO_DIR / "connectors"


async def _run_while_sampling(path: Path, present: Callable[[], Awaitable[bool]]) -> list[bool]:
    """Run the scenario; meanwhile note every 50 ms whether the provisioned objects exist."""
    samples: list[bool] = []

    async def sample() -> None:
        while True:
            samples.append(await present())
            await asyncio.sleep(0.05)

    sampler = asyncio.ensure_future(sample())
    try:
        result = await ScenarioRunner(load_scenario(path)).run()
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
    assert result.passed, f"step {result.failed_step}: {result.failure}"
    return samples


@pytest.fixture
def table(logical_pg: LogicalPostgres) -> Iterator[CdcTable]:
    t = CdcTable(logical_pg.url)
    yield t
    t.drop()


async def test_postgres_cdc_lifecycle_scenario(table: CdcTable, monkeypatch: pytest.MonkeyPatch) -> None:
    slot = f"scenario_{table.name}"
    monkeypatch.setenv("CDC_POSTGRES_URL", table.url)
    monkeypatch.setenv("CDC_TABLE", f"public.{table.name}")
    monkeypatch.setenv("CDC_SLOT", slot)

    async def present() -> bool:
        return await asyncio.to_thread(lambda: table.provisioned(slot) == (True, True))

    samples = await _run_while_sampling(SCENARIOS / "postgres-cdc-lifecycle.yaml", present)
    assert True in samples  # provisioned while it ran
    assert table.slots(slot[:40]) == []  # the slot and the reading copies the crashed worker left
    assert not table.publication_exists(slot)


async def test_rabbitmq_sink_lifecycle_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    exchange, prefix = unique("scenario"), unique("scenario") + "."
    monkeypatch.setenv("RABBITMQ_URL", rabbitmq_url())
    monkeypatch.setenv("RMQ_EXCHANGE", exchange)
    monkeypatch.setenv("RMQ_PREFIX", prefix)
    queues = [prefix + "orders", prefix + "refunds"]

    async def present() -> bool:
        return await exists("exchange", exchange) and all([await exists("queue", q) for q in queues])

    try:
        samples = await _run_while_sampling(SCENARIOS / "rabbitmq-sink-lifecycle.yaml", present)
        assert True in samples
        assert not await exists("exchange", exchange)
        assert not any([await exists("queue", q) for q in queues])
    finally:
        await delete_all(("exchange", exchange), *(("queue", q) for q in queues))
