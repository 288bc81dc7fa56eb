"""Upgrading a cluster from the JSON group protocol (0.1.0's ``connect-engine-sessioned``), on the
session's Apache Kafka.

A worker of this release offers only ``connect-engine-compact``: while a worker speaking only the JSON
protocol holds the group, it waits (the broker refuses its join) and the older worker keeps running
everything; once that one leaves, the new worker joins and takes the work over."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.distributed.member import GroupMember, broker_member
from engine.distributed.protocol import COMPACT_VERSION, PROTOCOL_VERSION
from engine.errors import ConnectorNotFound
from engine.testing.cluster import WorkerCluster
from tests.distributed.embedded import serving, until
from tests.integration.brokers import Broker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def older_release(*args: Any) -> GroupMember:
    """A member that speaks only the previous release's protocol (version 1, JSON)."""
    member = broker_member(*args)
    member.versions = (PROTOCOL_VERSION,)
    return member


def member_of(engine: Engine) -> GroupMember:
    cluster = engine.cluster
    assert cluster is not None
    assert isinstance(cluster.member, GroupMember)
    return cluster.member


async def runs_all(engine: Engine, name: str, tasks: int) -> bool:
    try:
        status = await engine.connector_status(name)
    except ConnectorNotFound:  # created, its status not written yet
        return False
    worker = engine.cluster.worker_id  # type: ignore[union-attr]
    return [(t["state"], t["worker_id"]) for t in status["tasks"]] == [("RUNNING", worker)] * tasks


async def test_a_worker_of_this_release_waits_for_the_older_ones_to_leave(
    kafka: Broker, tmp_path: Path
) -> None:
    group = WorkerCluster(kafka.bootstrap, tmp_path)
    old, old_rest = await serving(group, membership=older_release)
    config = {
        "connector.class": "engine.testing.recording.RecordingSourceConnector",
        "tasks.max": "4",
        "topic": "upgrade-out",
    }
    joining: asyncio.Task[Any] | None = None
    try:
        await old.create_connector("src", config)
        assert await until(lambda: runs_all(old, "src", 4))
        assert member_of(old).protocol_version == PROTOCOL_VERSION
        joining = asyncio.create_task(serving(group))
        await asyncio.sleep(6)  # three of its tries refused: the older worker holds the group
        assert not joining.done()
        assert await runs_all(old, "src", 4)
    finally:
        await old.shutdown()
        await old_rest.cleanup()
    assert joining is not None
    new, new_rest = await asyncio.wait_for(joining, 60)
    try:
        assert await until(lambda: runs_all(new, "src", 4))
        assert member_of(new).protocol_version == COMPACT_VERSION
    finally:
        await new.shutdown()
        await new_rest.cleanup()
