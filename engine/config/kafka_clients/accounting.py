"""What the worker's Kafka clients did, for Connect's client metrics (aiokafka keeps none).

A Java client registers ``kafka.producer<type=producer-metrics, client-id=X>`` (and the consumer's and
admin client's) with ``connection-count``, ``outgoing-byte-total``, ``incoming-byte-total``; Strimzi's
exporter rules turn them into ``kafka_producer_connection_count{clientid}`` and so on. aiokafka has no
metrics, so: every client ``start_client`` starts is tracked here (process-wide, as JMX is JVM-wide),
its connections are counted at scrape time from the client's open broker connections, and its bytes
are added where the engine hands records to aiokafka or gets them back (``add_outgoing``/
``add_incoming``). Those are record bytes (a produced batch's encoded size; a fetched record's key and
value), not the wire's bytes with request framing that Java counts: the rate follows the data, a few
percent under Java's.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

ClientRole = Literal["producer", "consumer", "admin_client"]

_ROLE_OF_CLASS: dict[str, ClientRole] = {
    "AIOKafkaProducer": "producer",
    "AIOKafkaConsumer": "consumer",
    "AIOKafkaAdminClient": "admin_client",
}


@dataclass(slots=True)
class ClientStats:
    """One started client: its role, its ``client.id``, and the bytes counted so far."""

    role: ClientRole
    client_id: str
    outgoing_bytes: int = 0
    incoming_bytes: int = 0
    closed: bool = False


class _Tracked:
    __slots__ = ("client", "stats")

    def __init__(self, client: Any, stats: ClientStats) -> None:
        self.client = weakref.ref(client)
        self.stats = stats


_TRACKED: dict[int, _Tracked] = {}  # by id(client); entries go when the client stops or is collected


def _role(client: Any) -> ClientRole | None:
    for cls in type(client).__mro__:
        role = _ROLE_OF_CLASS.get(cls.__name__)
        if role is not None:
            return role
    return None


def _inner(client: Any) -> Any:
    """The ``AIOKafkaClient`` inside a producer (``client``), consumer or admin client (``_client``)."""
    return getattr(client, "_client", None) or getattr(client, "client", None)


def track(client: Any) -> ClientStats | None:
    """Count ``client`` from now on (``start_client`` calls this once the client started)."""
    role = _role(client)
    if role is None:
        return None
    key = id(client)
    entry = _TRACKED.get(key)
    if entry is not None and entry.client() is client:
        return entry.stats
    inner = _inner(client)
    stats = ClientStats(role, str(getattr(inner, "_client_id", "") or getattr(client, "_client_id", "")))
    _TRACKED[key] = _Tracked(client, stats)
    weakref.finalize(client, _TRACKED.pop, key, None)
    return stats


def _stats(client: Any) -> ClientStats | None:
    entry = _TRACKED.get(id(client))
    return entry.stats if entry is not None and entry.client() is client else None


def add_outgoing(client: Any, size: int) -> None:
    """``size`` record bytes handed to producer ``client`` (Java's ``outgoing-byte-total``)."""
    stats = _stats(client)
    if stats is not None and size > 0:
        stats.outgoing_bytes += size


def add_incoming(client: Any, size: int) -> None:
    """``size`` record bytes a consumer ``client`` returned (Java's ``incoming-byte-total``)."""
    stats = _stats(client)
    if stats is not None and size > 0:
        stats.incoming_bytes += size


def record_size(key: bytes | None, value: bytes | None, headers: Any = ()) -> int:
    """A record's bytes as the engine hands them over: key, value, header names and values."""
    size = (len(key) if key else 0) + (len(value) if value else 0)
    for name, header in headers or ():
        size += len(name) + (len(header) if header else 0)
    return size


def fetched_size(records: Any) -> int:
    """The key and value bytes of aiokafka ``ConsumerRecord``s (their serialized sizes, -1 for null)."""
    return sum(max(r.serialized_key_size, 0) + max(r.serialized_value_size, 0) for r in records)


def _closed(client: Any) -> bool:
    return bool(getattr(client, "_closed", False)) or bool(getattr(_inner(client), "_closed", False))


def connections(client: Any) -> int:
    """The client's open broker connections (its bootstrap one included), Java's ``connection-count``."""
    conns = getattr(_inner(client), "_conns", None) or {}
    return sum(1 for conn in list(conns.values()) if conn.connected())


def live_clients() -> Iterator[tuple[ClientStats, int]]:
    """Every tracked client still open, with its connection count now; stopped ones are forgotten."""
    for key, entry in list(_TRACKED.items()):
        client = entry.client()
        if client is None or _closed(client):
            _TRACKED.pop(key, None)
            continue
        yield entry.stats, connections(client)
