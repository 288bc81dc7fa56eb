"""A topic's retention, compaction and segment settings, under Kafka's topic config names.

Defaults are Kafka's except ``segment.bytes``: 64 MiB instead of 1 GiB. Old data goes a whole
segment at a time and compaction rewrites a segment in one pass, so a broker-sized segment would
keep up to 1 GiB past ``retention.bytes`` per partition and make each pass long, on a worker's
disk rather than a broker's. Workers set their own defaults with ``topics.retention.ms``,
``topics.retention.bytes`` and ``topics.segment.bytes`` (Kafka's ``log.*`` broker defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import ConfigError
from engine.topics.errors import TopicsError

DEFAULTS: dict[str, str] = {
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
}

_MINIMUMS = {"retention.ms": -1, "retention.bytes": None, "segment.bytes": 14, "segment.ms": 1,
             "delete.retention.ms": 0}  # Kafka's validators (14: the smallest record batch)
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
        raise ValueError(f"Invalid value {raw} for configuration {key}: Not a number of type DOUBLE") from None
    if not 0 <= value <= 1:
        raise ValueError(f"Invalid value {raw} for configuration {key}: Value must be between 0 and 1")
    return value


def _policy(raw: str, key: str) -> frozenset[str]:
    policy = frozenset(p.strip().lower() for p in raw.split(",") if p.strip())
    if not policy or not policy <= _POLICIES:
        raise ValueError(f"Invalid value {raw} for configuration {key}: String must be one of: compact, delete")
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
        merged = {**DEFAULTS, **(defaults or {}), **configs}
        try:
            policy = _policy(merged["cleanup.policy"], "cleanup.policy")
            return cls(
                retention_ms=_long(merged["retention.ms"], "retention.ms"),
                retention_bytes=_long(merged["retention.bytes"], "retention.bytes"),
                delete="delete" in policy,
                compact="compact" in policy,
                segment_bytes=_long(merged["segment.bytes"], "segment.bytes"),
                segment_ms=_long(merged["segment.ms"], "segment.ms"),
                delete_retention_ms=_long(merged["delete.retention.ms"], "delete.retention.ms"),
                min_cleanable_dirty_ratio=_ratio(merged["min.cleanable.dirty.ratio"], "min.cleanable.dirty.ratio"),
            )
        except ValueError as exc:
            raise TopicsError(str(exc)) from None


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
