"""A topic's retention, compaction and segment settings, under Kafka's topic config names.

Defaults are Kafka's except ``segment.bytes``: 64 MiB instead of 1 GiB. Old data goes a whole
segment at a time and compaction rewrites a segment in one pass, so a broker-sized segment would
keep up to 1 GiB past ``retention.bytes`` per partition and make each pass long, on a worker's
disk rather than a broker's. Workers set their own defaults with ``topics.retention.ms``,
``topics.retention.bytes``, ``topics.segment.bytes`` and ``topics.segment.ms`` (Kafka's ``log.*``
broker defaults).

Unlike Kafka, a topic whose ``retention.ms`` is set (on the topic, or the worker's
``topics.retention.ms``) and whose ``segment.ms`` is not (nor ``topics.segment.ms``) rolls a segment
every tenth of its ``retention.ms`` (at least 1 s, at most Kafka's 7 days), and the retention check
runs as often (``topics.retention.check.interval.ms``,
by default a tenth of ``topics.retention.ms`` within 1 s .. Kafka's 5 minutes). A segment goes only
once its newest record is past retention, so with Kafka's week-long segments a short retention
would keep nothing from growing until the first roll; with these defaults the disk holds about
1.2 retention windows of data, whatever the rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import ConfigError
from engine.topics.errors import TopicsError

KAFKA_TOPIC_CONFIG: dict[str, str] = {  # Kafka's topic-level defaults
    "retention.ms": "604800000",  # 7 days
    "retention.bytes": "-1",  # unlimited
    "cleanup.policy": "delete",
    "segment.bytes": str(64 * 1024 * 1024),
    "segment.ms": "604800000",
    "delete.retention.ms": "86400000",  # how long a compacted topic keeps a tombstone
    "min.cleanable.dirty.ratio": "0.5",
}

WORKER_KEYS: dict[str, str] = {
    "topics.retention.ms": "retention.ms",
    "topics.retention.bytes": "retention.bytes",
    "topics.segment.bytes": "segment.bytes",
    "topics.segment.ms": "segment.ms",
}
RETENTION_CHECK_KEY = "topics.retention.check.interval.ms"
RETENTION_CHECK_DEFAULT_MS = 300_000  # Kafka's log.retention.check.interval.ms
_WINDOW_FRACTION = 10  # segments roll, and retention runs, every tenth of the retention window
_SHORTEST_DERIVED_MS = 1000

_MINIMUMS = {
    "retention.ms": -1,
    "retention.bytes": None,
    "segment.bytes": 14,
    "segment.ms": 1,
    "delete.retention.ms": 0,
}  # Kafka's validators (14: the smallest record batch)
_POLICIES = frozenset({"delete", "compact"})


def _long(raw: str, key: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f"Invalid value {raw} for configuration {key}: Not a number of type LONG") from None
    minimum = _MINIMUMS[key]
    if minimum is not None and value < minimum:
        raise ValueError(f"Invalid value {raw} for configuration {key}: Value must be at least {minimum}")
    return value


def _ratio(raw: str, key: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ValueError(
            f"Invalid value {raw} for configuration {key}: Not a number of type DOUBLE"
        ) from None
    if not 0 <= value <= 1:
        raise ValueError(f"Invalid value {raw} for configuration {key}: Value must be between 0 and 1")
    return value


def _policy(raw: str, key: str) -> frozenset[str]:
    policy = frozenset(p.strip().lower() for p in raw.split(",") if p.strip())
    if not policy or not policy <= _POLICIES:
        raise ValueError(
            f"Invalid value {raw} for configuration {key}: String must be one of: compact, delete"
        )
    return policy


@dataclass(frozen=True, slots=True)
class LogConfig:
    retention_ms: int  # -1: kept forever
    retention_bytes: int  # negative: unlimited
    delete: bool  # cleanup.policy has delete: retention drops old segments
    compact: bool  # cleanup.policy has compact: the latest record per key is kept
    segment_bytes: int
    segment_ms: int
    delete_retention_ms: int
    min_cleanable_dirty_ratio: float

    @classmethod
    def parse(cls, configs: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> LogConfig:
        """The topic's ``configs`` over ``defaults`` over Kafka's; ``TopicsError`` names a bad value.

        Other keys (``compression.type``, ``min.insync.replicas`` ...) are kept by the caller and
        mean nothing in process.
        """
        merged = {**KAFKA_TOPIC_CONFIG, **(defaults or {}), **configs}
        try:
            policy = _policy(merged["cleanup.policy"], "cleanup.policy")
            retention_ms = _long(merged["retention.ms"], "retention.ms")
            segment_ms = _long(merged["segment.ms"], "segment.ms")
            chosen = {**(defaults or {}), **configs}
            if "retention.ms" in chosen and "segment.ms" not in chosen and "delete" in policy:
                segment_ms = min(segment_ms, _fraction_of_window(retention_ms, segment_ms))
            return cls(
                retention_ms=retention_ms,
                retention_bytes=_long(merged["retention.bytes"], "retention.bytes"),
                delete="delete" in policy,
                compact="compact" in policy,
                segment_bytes=_long(merged["segment.bytes"], "segment.bytes"),
                segment_ms=segment_ms,
                delete_retention_ms=_long(merged["delete.retention.ms"], "delete.retention.ms"),
                min_cleanable_dirty_ratio=_ratio(
                    merged["min.cleanable.dirty.ratio"], "min.cleanable.dirty.ratio"
                ),
            )
        except ValueError as exc:
            raise TopicsError(str(exc)) from None


def _fraction_of_window(retention_ms: int, longest: int) -> int:
    """A tenth of a retention window, within 1 s .. ``longest``; ``longest`` when nothing expires by time."""
    if retention_ms < 0:
        return longest
    return min(longest, max(_SHORTEST_DERIVED_MS, retention_ms // _WINDOW_FRACTION))


def retention_check_interval_ms(worker: Mapping[str, str]) -> int:
    """``topics.retention.check.interval.ms``, or a tenth of ``topics.retention.ms`` (1 s .. 5 min)."""
    raw = worker.get(RETENTION_CHECK_KEY, "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            message = (
                f"Invalid value {raw} for configuration {RETENTION_CHECK_KEY}: "
                "Value must be a number of milliseconds, at least 1"
            )
            raise ConfigError(message, errors={RETENTION_CHECK_KEY: [message.split(": ", 1)[1]]})
        return value
    retention = worker_defaults(worker).get("retention.ms")
    if retention is None:
        return RETENTION_CHECK_DEFAULT_MS
    return _fraction_of_window(int(retention), RETENTION_CHECK_DEFAULT_MS)


def worker_defaults(worker: Mapping[str, str]) -> dict[str, str]:
    """The worker's ``topics.*`` keys as topic config names; ``ConfigError`` on a bad value."""
    chosen = {topic_key: worker[key] for key, topic_key in WORKER_KEYS.items() if worker.get(key, "").strip()}
    for key, topic_key in WORKER_KEYS.items():
        if topic_key in chosen:
            try:
                _long(chosen[topic_key], topic_key)
            except ValueError as exc:
                message = str(exc).replace(f"configuration {topic_key}", f"configuration {key}")
                raise ConfigError(message, errors={key: [message.split(": ", 1)[1]]}) from None
    return chosen
