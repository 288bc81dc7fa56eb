"""Batch bookkeeping of source offsets: only each partition's acknowledged prefix is committable."""

from __future__ import annotations

from engine.api import SourceRecord
from engine.worker.submitted_records import SubmittedRecords


def batch(*pairs: tuple[str, int]) -> list[SourceRecord]:
    return [
        SourceRecord(topic="t", value=n, source_partition={"p": p}, source_offset={"n": n}) for p, n in pairs
    ]


def test_an_acknowledged_batch_commits_the_newest_offset_of_each_partition() -> None:
    submitted = SubmittedRecords()
    sent = submitted.submit_batch(batch(("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)))
    assert submitted.committable() == []
    assert submitted.outstanding == 5
    sent.ack()
    assert sorted((dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()) == [("a", 3), ("b", 2)]
    assert submitted.outstanding == 0
    assert submitted.committable() == []


def test_a_later_batch_waits_for_an_earlier_one_of_the_same_partition() -> None:
    submitted = SubmittedRecords()
    first = submitted.submit_batch(batch(("a", 1), ("a", 2)))
    second = submitted.submit_batch(batch(("a", 3), ("b", 1)))
    second.ack()  # acks out of order, as Kafka partitions may
    assert [(dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()] == [("b", 1)]
    first.ack()
    assert [(dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()] == [("a", 3)]


def test_a_failed_record_holds_back_its_partition_until_acknowledged_alone() -> None:
    submitted = SubmittedRecords()
    sent = submitted.submit_batch(batch(("a", 1), ("a", 2), ("b", 1), ("a", 3), ("a", 4)))
    sent.ack(failed={1, 4})  # ("a", 2) and ("a", 4) failed
    assert sorted((dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()) == [("a", 1), ("b", 1)]
    assert submitted.outstanding == 2
    sent.ack_one(1)  # reported and tolerated: acknowledged after all
    assert [(dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()] == [("a", 3)]
    sent.ack_one(4)
    assert [(dict(p)["p"], dict(o)["n"]) for p, o in submitted.committable()] == [("a", 4)]
    assert submitted.outstanding == 0


def test_single_submissions_and_batches_share_the_order() -> None:
    submitted = SubmittedRecords()
    one = submitted.submit({"p": "a"}, {"n": 1})
    sent = submitted.submit_batch(batch(("a", 2)))
    sent.ack()
    assert submitted.committable() == []
    one.ack()
    assert [dict(o)["n"] for _, o in submitted.committable()] == [2]


def test_unhashable_partitions_are_keyed_by_their_json() -> None:
    submitted = SubmittedRecords()
    records = [
        SourceRecord(topic="t", value=i, source_partition={"tables": ["x", "y"]}, source_offset={"n": i})
        for i in range(3)
    ]
    submitted.submit_batch(records).ack()
    assert [dict(o)["n"] for _, o in submitted.committable()] == [2]
