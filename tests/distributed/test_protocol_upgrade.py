"""A rolling upgrade across the group protocol's encodings, on the session's Apache Kafka.

A worker of this release offers the compact encoding first and the JSON one after it; a worker that
offers only JSON (as the previous release did) makes the broker choose JSON for the whole group, and
once it leaves, the next round moves every member to the compact encoding."""

from __future__ import annotations

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
    """A member that speaks only the previous release's encoding (version 1, JSON)."""
    member = broker_member(*args)
    member.versions = (PROTOCOL_VERSION,)
    return member


def member_of(engine: Engine) -> GroupMember:
    cluster = engine.cluster
    assert cluster is not None
    assert isinstance(cluster.member, GroupMember)
    return cluster.member


async def test_a_group_with_an_older_member_speaks_json_and_moves_to_compact_when_it_leaves(
    kafka: Broker, tmp_path: Path
) -> None:
    group = WorkerCluster(kafka.bootstrap, tmp_path)
    old, old_rest = await serving(group, membership=older_release)
    new, new_rest = await serving(group)
    try:
        config = {
            "connector.class": "engine.testing.recording.RecordingSourceConnector",
            "tasks.max": "4",
            "topic": "upgrade-out",
        }

        async def both_run_tasks() -> set[str] | None:
            if old.cluster is None or new.cluster is None or old.cluster.leader != new.cluster.leader:
                return None
            chosen = old if old.cluster.leader == old.cluster.worker_id else new
            if "src" not in await chosen.connectors():
                await chosen.create_connector("src", config)
            try:
                status = await chosen.connector_status("src")
            except ConnectorNotFound:  # created, its status not written yet
                return None
            owners = {t["worker_id"] for t in status["tasks"] if t["state"] == "RUNNING"}
            return owners if len(status["tasks"]) == 4 and len(owners) == 2 else None

        assert await until(both_run_tasks) == {old.cluster.worker_id, new.cluster.worker_id}  # type: ignore[union-attr]
        assert member_of(old).protocol_version == PROTOCOL_VERSION
        assert member_of(new).protocol_version == PROTOCOL_VERSION
    finally:
        await old.shutdown()
        await old_rest.cleanup()

    async def new_runs_everything() -> bool:
        status = await new.connector_status("src")
        states = [(t["state"], t["worker_id"]) for t in status["tasks"]]
        return states == [("RUNNING", new.cluster.worker_id)] * 4  # type: ignore[union-attr]

    try:
        assert await until(new_runs_everything)
        assert member_of(new).protocol_version == COMPACT_VERSION
    finally:
        await new.shutdown()
        await new_rest.cleanup()
