"""TimestampRouter formats once per run of records with one topic and timestamp, and never reuses a stale topic."""

from __future__ import annotations

from engine.api import SinkRecord
from engine.transforms.timestamp_router import TimestampRouter


def test_each_record_is_routed_by_its_own_topic_and_timestamp() -> None:
    router = TimestampRouter()
    router.configure({"timestamp.format": "yyyyMMdd-HHmmss"})
    day = 1_700_000_000_000
    stamps = [("a", day), ("a", day), ("b", day), ("a", day + 1000), ("a", day)]
    routed = [router.apply(SinkRecord(topic=t, value=1, timestamp=ts)).topic for t, ts in stamps]
    assert routed == [
        "a-20231114-221320",
        "a-20231114-221320",
        "b-20231114-221320",
        "a-20231114-221321",
        "a-20231114-221320",
    ]
