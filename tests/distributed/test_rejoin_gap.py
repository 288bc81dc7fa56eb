"""A burst of config changes shares a round: after a large assignment, a change's rejoin waits out the
gap (``member.round_gap_s``), and the changes read meanwhile ride on that one request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine.distributed.member import GroupMember, round_gap_s
from engine.distributed.protocol import COMPACT_VERSION, PROTOCOL_VERSION, Assignment, ClusterView, Work


class _Coordinator:
    def __init__(self) -> None:
        self.rejoins = 0

    def request_rejoin(self) -> None:
        self.rejoins += 1


def _member() -> tuple[GroupMember, _Coordinator, list[Assignment]]:
    received: list[Assignment] = []
    member = GroupMember(
        "127.0.0.1:9",
        "g",
        "cfg",
        client_id="c",
        join_metadata=lambda: None,  # type: ignore[arg-type,return-value]
        planner=lambda *_: {},
        on_assignment=lambda a, _g: received.append(a),
    )
    coordinator = _Coordinator()
    consumer: Any = type("Consumer", (), {})()
    consumer._coordinator = coordinator
    member._consumer = consumer
    return member, coordinator, received


def _assignment(connectors: int, *, version: int = COMPACT_VERSION) -> bytes:
    """One member's share of a cluster of ``connectors`` x 2 tasks on three workers."""
    mine = range(0, connectors, 3)
    work = Work.of([f"c-{n:05d}" for n in mine], [(f"c-{n:05d}", t) for n in mine for t in (0, 1)])
    size = 3 * connectors
    if version == PROTOCOL_VERSION:  # an older leader: no size, but every member gets the whole view
        every = range(connectors)
        owners = {
            "w1": Work.of([f"c-{n:05d}" for n in every], [(f"c-{n:05d}", t) for n in every for t in (0, 1)])
        }
        return Assignment("w1", "http://w1", 1, work, view=ClusterView(4, owners)).encode(version)
    return Assignment("w1", "http://w1", 1, work, cluster_size=size).encode(version)


def test_the_gap_grows_with_the_cluster_and_is_bounded() -> None:
    assert round_gap_s(600) == 0.0  # a few hundred connectors with their tasks: at once
    assert 0.0 < round_gap_s(3_000) < round_gap_s(9_000) < round_gap_s(30_000) <= 2.0
    assert round_gap_s(10_000_000) == 2.0


@pytest.mark.parametrize("version", [COMPACT_VERSION, PROTOCOL_VERSION])
def test_the_gap_follows_the_cluster_not_this_members_share(version: int) -> None:
    small, large = _member()[0], _member()[0]
    small.assigned(_assignment(100, version=version))
    large.assigned(_assignment(3_000, version=version))
    assert small._gap_s == 0.0
    assert large._gap_s == pytest.approx(round_gap_s(9_000), rel=0.3)


async def test_a_small_cluster_rejoins_at_once_for_every_change() -> None:
    member, coordinator, received = _member()
    member.assigned(_assignment(20))
    assert received
    member.request_rejoin_for_change()
    member.request_rejoin_for_change()
    assert coordinator.rejoins == 2


async def test_after_a_large_round_a_burst_of_changes_asks_once_after_the_gap() -> None:
    member, coordinator, _ = _member()
    raw = _assignment(3_000)
    gap = round_gap_s(9_000)
    assert gap > 0.05
    member.assigned(raw)
    for _ in range(50):  # fifty creates read back within the gap
        member.request_rejoin_for_change()
    assert coordinator.rejoins == 0
    await asyncio.sleep(gap + 0.1)
    assert coordinator.rejoins == 1
    member.request_rejoin_for_change()  # past the gap: at once
    assert coordinator.rejoins == 2


async def test_a_revocation_rejoins_at_once_and_takes_the_waiting_change_with_it() -> None:
    member, coordinator, _ = _member()
    member.assigned(_assignment(3_000))
    member.request_rejoin_for_change()
    member.request_rejoin()  # phase two of a rebalance: never waits
    assert coordinator.rejoins == 1
    await asyncio.sleep(round_gap_s(9_000) + 0.1)
    assert coordinator.rejoins == 1  # the change's rejoin went with it


async def test_a_round_that_covered_the_change_drops_the_waiting_rejoin() -> None:
    member, coordinator, _ = _member()
    member.assigned(_assignment(3_000))
    member.request_rejoin_for_change()  # a change read: its rejoin waits out the gap
    member.change_covered()  # another member's round planned after it
    await asyncio.sleep(round_gap_s(9_000) + 0.1)
    assert coordinator.rejoins == 0
    member.request_rejoin_for_change()  # a later change still asks
    assert coordinator.rejoins == 1


@pytest.mark.parametrize("leader", [True, False])
def test_a_deletion_is_written_while_a_rebalance_is_due(leader: bool) -> None:
    from engine.config.worker import WorkerConfig
    from engine.distributed.cluster_mode import ClusterMode
    from engine.errors import NotLeader, RebalanceNeeded
    from engine.herder.timers import LoopTimers

    worker = WorkerConfig.parse(
        {"group.id": "g", "bootstrap.servers": "127.0.0.1:9", "listeners": "http://127.0.0.1:8083"}
    )
    mode = ClusterMode(worker, lambda: None, LoopTimers(), membership=lambda *_: _Membership())  # type: ignore[arg-type,return-value]
    cluster = mode.cluster
    cluster.leader = cluster.worker_id if leader else "127.0.0.1:9999"
    cluster.work_changed(7)  # a create read back: its round is due
    assert cluster.needs_rebalance
    with pytest.raises(RebalanceNeeded):
        mode.check_leader_write()  # a restart, a stop, a config update: still 409, retry
    if leader:
        mode.check_delete()
        mode.check_create()
    else:
        with pytest.raises(NotLeader):
            mode.check_delete()


class _Membership:
    def request_rejoin(self) -> None: ...

    def change_covered(self) -> None: ...

    def request_rejoin_for_change(self) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def in_contact(self) -> bool:
        return True
