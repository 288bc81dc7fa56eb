"""What crosses between a worker and one of its task hosts: length-prefixed pickles over the host's
stdin (worker to host) and a duplicate of its stdout (host to worker).

Pickle, not JSON: task and connector configs, offsets and task counters cross as they are, and
both ends are the same code on the same interpreter (a trusted pipe to our own child).
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.observability.connect_metrics import CounterValues, ProcessReading

_LENGTH = struct.Struct(">I")


def frame(message: object) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> object | None:
    """The next message, or None at the end of the stream (the other side closed or died)."""
    try:
        header = await reader.readexactly(_LENGTH.size)
        (length,) = _LENGTH.unpack(header)
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None
    message: object = pickle.loads(body)
    return message


# ---- worker to host ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """The first message: the worker's properties (the host builds its own clients from them)."""

    worker: dict[str, str]
    log_level: str
    # the worker's offsets topic (None: not on Kafka): exactly-once tasks write their offsets there
    offsets_topic: str | None = None


@dataclass(frozen=True, slots=True)
class Lease:
    """The tasks of this host the worker still runs, renewed every ``LEASE_RENEW_S``; ``tasks`` is
    None when they are the ones the last lease named (a renewal costs a few bytes, however many
    tasks the host runs).

    A host writes for a task only while its lease is fresh (``LEASE_S``): a worker that stops
    renewing (SIGSTOPped, cut off from its group: KAFKA-9184) stops its hosts' writes too, before
    the group hands the work to another worker, as its own loops would stop."""

    tasks: frozenset[tuple[str, int]] | None


LEASE_RENEW_S = 0.5
LEASE_S = 3.0  # Connect's default heartbeat.interval.ms; well inside session.timeout.ms


@dataclass(frozen=True, slots=True)
class StartTask:
    """Run one task instance; ``key`` names it on this pipe (a task restarted gets a new key)."""

    key: int
    connector: str
    task: int
    task_class: str
    config: dict[str, str]
    connector_config: dict[str, str]
    target: str
    incarnation: str | None
    # the connector's committed source offsets when the task starts: (partition, offset) pairs
    offsets: list[tuple[Mapping[str, Any], Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class Retarget:
    key: int
    target: str


@dataclass(frozen=True, slots=True)
class StopTask:
    """The task's final stop; ``deleted``: ``stop(connector_deleted=True)``."""

    key: int
    deleted: bool


@dataclass(frozen=True, slots=True)
class Abandon:
    """The task overran its graceful stop on a shared host: cancel it there, leave its thread."""

    key: int


@dataclass(frozen=True, slots=True)
class Flushed:
    """The answer to ``FlushOffsets``: ``error`` is why the worker's flush failed, None if it did not."""

    request: int
    error: str | None


# ---- host to worker ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reported:
    """The task's runner reported a lifecycle trigger (with its trace for ``fail``)."""

    key: int
    trigger: str
    trace: str | None


@dataclass(frozen=True, slots=True)
class Stopped:
    """The task's runner finished: its stop ran (or it was abandoned)."""

    key: int


@dataclass(frozen=True, slots=True)
class Counters:
    """Tasks' counters as they are now (``TaskCounters.values()``), by key, for the worker's
    ``/metrics``: those that changed since they last crossed, in one message a ``COUNTERS_INTERVAL_S``
    (a frame per task made a worker with thousands of idle tasks read thousands of frames a second,
    and pickled objects made each message cost both loops about 10 ms per thousand tasks)."""

    counters: dict[int, CounterValues]


@dataclass(frozen=True, slots=True)
class HostMetrics:
    """The host's plugin metrics (KIP-877) and Kafka clients now, for the worker's ``/metrics``."""

    reading: ProcessReading


@dataclass(frozen=True, slots=True)
class WriteOffsets:
    """Source offsets a task commits: written by the worker's offset store, the one every reader sees."""

    connector: str
    offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]


@dataclass(frozen=True, slots=True)
class CommittedOffsets:
    """An exactly-once task's transaction committed these offsets to the offsets topic itself: the
    worker's store takes them now, as it does for a task in its own process (and reads them back anyway)."""

    connector: str
    offsets: list[tuple[dict[str, Any], dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class FlushOffsets:
    request: int


@dataclass(frozen=True, slots=True)
class TrackTopic:
    """``topic.tracking.enable``: a task used ``topic`` (the worker's status store records it)."""

    connector: str
    task: int
    topic: str
