"""What a member says it owns when it joins: the newest assignment it received, applied or not
(Connect's ``assignmentSnapshot``). Saying only what it had applied let the leader hand work the
member was about to start to another worker too: with 10,000 connectors on three workers, hundreds
of tasks ran on two workers at once and ended showing UNASSIGNED."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.distributed.cluster import Cluster
from engine.distributed.protocol import Assignment, JoinMetadata, Work
from engine.distributed.settings import ClusterSettings


class _Seat:
    """A group seat that never joins: the test hands the cluster its assignments."""

    def __init__(self, *callbacks: Any) -> None:
        self.join_metadata: Callable[[], JoinMetadata] = callbacks[1]
        self.received: Callable[[Assignment, int], None] = callbacks[3]
        self.cut_off: Callable[[], None] = callbacks[4]
        self.contact = True

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def request_rejoin(self) -> None: ...

    def request_rejoin_for_change(self) -> None: ...

    def change_covered(self) -> None: ...

    def in_contact(self) -> bool:
        return self.contact


def _cluster() -> tuple[Cluster, _Seat]:
    seats: list[_Seat] = []

    def seat(*callbacks: Any) -> _Seat:
        seats.append(_Seat(*callbacks))
        return seats[-1]

    settings = ClusterSettings(
        "w1", "http://w1", "127.0.0.1:9", "g", "cfg", 10_000, 3_000, 60_000, 30_000, 0, 5.0
    )
    cluster = Cluster(settings, rest_client=None, member_factory=seat)  # type: ignore[arg-type]
    return cluster, seats[0]


def _work(*tasks: int) -> Work:
    return Work.of(["c"], [("c", n) for n in tasks])


def test_a_member_joining_before_it_applied_its_assignment_says_it_owns_that_assignment() -> None:
    cluster, seat = _cluster()
    seat.received(Assignment("w1", "http://w1", 0, _work(0, 1)), 1)
    assert cluster.owned == Work()  # received, not applied yet
    assert seat.join_metadata().owned == _work(0, 1)
    seat.received(Assignment("w1", "http://w1", 0, _work(1)), 2)  # the newest counts
    assert seat.join_metadata().owned == _work(1)
    seat.received(
        Assignment("w1", "http://w1", 0, Work(), error="config behind"), 3
    )  # an error changes nothing
    assert seat.join_metadata().owned == _work(1)


def test_what_a_member_still_runs_is_its_own_until_it_applied_the_assignment_that_stops_it() -> None:
    """The other half: work taken away is said to be owned here until it stopped, so the leader
    cannot hand it on while it still runs here."""
    cluster, seat = _cluster()
    cluster.owned = _work(0, 1)  # applied earlier
    seat.received(Assignment("w1", "http://w1", 0, _work(1), revoked=_work(0)), 2)
    assert seat.join_metadata().owned == _work(0, 1)


def test_a_cut_off_member_says_it_owns_nothing_whatever_it_received() -> None:
    cluster, seat = _cluster()
    seat.received(Assignment("w1", "http://w1", 0, _work(0, 1)), 1)
    seat.contact = False
    seat.cut_off()
    assert seat.join_metadata().owned == Work()
    assert cluster.busy is False  # what it had received is dropped with it
