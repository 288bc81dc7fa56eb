"""The cluster invariants on call sequences written out by hand: what each rule lets through and what it reports."""

from __future__ import annotations

from engine.scenario.invariants import ClusterInvariants
from engine.testing.recording import Call


class Run:
    """Calls, kills and pending-cleanup records in the order they happen."""

    def __init__(self, *, retries: bool = False) -> None:
        self.calls: list[Call] = []
        self.rules = ClusterInvariants(
            count=lambda: len(self.calls), retries_allowed=lambda connector: retries
        )

    def call(self, worker: str, unit: str, method: str) -> Run:
        self.calls.append(Call("c", unit, method, {}, worker))
        return self

    def pending(self) -> Run:
        self.rules.record("pending-cleanup-c", b"{}")
        return self

    def cleared(self) -> Run:
        self.rules.record("pending-cleanup-c", None)
        return self

    def killed(self, worker: str) -> Run:
        self.rules.killed(worker)
        return self

    def check(self) -> list[str]:
        return self.rules.check(self.calls)


def test_a_task_moved_after_its_stop_is_fine() -> None:
    run = Run().call("w1", "task-0", "initialize").call("w1", "task-0", "start").call("w1", "task-0", "stop")
    assert run.call("w2", "task-0", "initialize").call("w2", "task-0", "start").check() == []


def test_a_task_started_beside_a_running_instance_is_reported() -> None:
    run = Run().call("w1", "task-0", "initialize").call("w2", "task-0", "initialize")
    assert run.check() == [
        "task c-0 started on w2 (call #2) while its instance on w1 (started at call #1) had not been stopped"
    ]


def test_a_killed_workers_instances_end_with_it() -> None:
    run = Run().call("w1", "task-0", "initialize").killed("w1").call("w2", "task-0", "initialize")
    assert run.check() == []


def test_the_rules_are_checked_as_the_run_goes() -> None:
    run = Run().call("w1", "task-0", "initialize")
    assert run.check() == []
    assert run.call("w2", "task-0", "initialize").check() != []
    assert run.check() == []  # each violation is reported once


def test_deleted_once_per_deletion() -> None:
    run = Run().pending().call("w1", "connector", "deleted").cleared()
    assert run.check() == []
    run.pending().call("w2", "connector", "deleted").cleared()  # a new incarnation's deletion
    assert run.check() == []


def test_deleted_again_after_the_cleanup_cleared_is_reported() -> None:
    run = Run().pending().call("w1", "connector", "deleted").cleared().call("w2", "connector", "deleted")
    assert run.check() == [
        "deleted() of c ran on w2 (call #2) with no deletion of it pending: it had run and "
        "been cleared already"
    ]


def test_deleted_twice_is_reported_unless_the_first_ones_worker_died_or_it_was_made_to_fail() -> None:
    run = Run().pending().call("w1", "connector", "deleted").call("w2", "connector", "deleted")
    assert run.check() == [
        "deleted() of c ran twice: on w1 (call #1) and on w2 (call #2), though the first "
        "one's worker did not die"
    ]
    died = Run().pending().call("w1", "connector", "deleted").killed("w1").call("w2", "connector", "deleted")
    assert died.check() == []
    failing = (
        Run(retries=True).pending().call("w1", "connector", "deleted").call("w1", "connector", "deleted")
    )
    assert failing.check() == []


def test_a_deletion_cleared_without_deleted_is_reported() -> None:
    assert Run().pending().cleared().check() == ["the deletion of c was cleared but deleted() never ran"]
