"""Per-task rate limits (our addition, after KIP-731's idea): ``record.rate.limit`` and
``bytes.per.second.max`` on any connector.

A source is paced between ``poll()`` calls and a sink between ``put()`` calls: each batch spends
its records and bytes from a token bucket that may go into debt, and the next batch waits until the
debt is paid (``Pacer.delay``). Nothing is split or dropped, so a batch larger than one second's
allowance passes whole and is followed by a longer wait; idle time earns no credit, so there is no
burst after a quiet spell. The wait is a timer, never a busy loop: ``Timers.call_later`` (real time,
or ``VirtualTimers`` in tests and scenarios), parked so pause, stop and offset commits still run.

The limits are read from the connector config the task starts with; a config update restarts the
tasks, so a new limit applies from then on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.api.config_def import ConfigDefError, ConfigKey, ConfigType, Importance, LambdaValidator, Width
from engine.api.errors import ConfigException
from engine.observability.connect_metrics import TaskCounters

RECORD_RATE_LIMIT = "record.rate.limit"
BYTES_PER_SECOND_MAX = "bytes.per.second.max"
RATE_LIMITS_GROUP = "Rate Limits"


class PacingTimers(Protocol):
    """What the pacer waits on: ``engine.herder.timers.Timers`` (real or virtual), structurally."""

    def time(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any: ...


class _LoopTimers:
    def time(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Any:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)


def _rate(config: Mapping[str, str], key: str) -> float | None:
    """A positive number, or None when unset or empty (no limit)."""
    raw = config.get(key)
    if raw is None or not str(raw).strip():
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ConfigException(key, raw, "Not a number of type DOUBLE") from None
    if not value > 0 or value == float("inf"):
        raise ConfigException(key, raw, "Value must be a positive number")
    return value


def _check(name: str, value: Any) -> None:
    if value is not None and (not value > 0 or value == float("inf")):
        raise ConfigDefError.invalid(name, value, "Value must be a positive number")


def _key(order: int, name: str, what: str, display: str) -> ConfigKey:
    return ConfigKey(
        name,
        ConfigType.DOUBLE,
        None,
        LambdaValidator(_check, "null or a positive number"),
        Importance.LOW,
        f"The most {what} one task of this connector handles per second: a source is paced "
        f"between polls, a sink between puts. Unset: no limit.",
        RATE_LIMITS_GROUP,
        order,
        Width.SHORT,
        display,
    )


RATE_KEYS = [
    _key(1, RECORD_RATE_LIMIT, "records", "Records per second per task"),
    _key(2, BYTES_PER_SECOND_MAX, "bytes (keys and values as serialized)", "Bytes per second per task"),
]


@dataclass(frozen=True, slots=True)
class RateLimits:
    records_per_second: float | None = None
    bytes_per_second: float | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, str]) -> RateLimits:
        return cls(_rate(config, RECORD_RATE_LIMIT), _rate(config, BYTES_PER_SECOND_MAX))

    @property
    def active(self) -> bool:
        return self.records_per_second is not None or self.bytes_per_second is not None


class Pacer:
    """One task's token buckets (records, bytes), in debt after a batch until time pays it back."""

    def __init__(
        self, limits: RateLimits, counters: TaskCounters, timers: PacingTimers | None = None
    ) -> None:
        self.limits = limits
        self.counters = counters
        self.timers: PacingTimers = timers if timers is not None else _LoopTimers()
        self._records_ready = self._bytes_ready = float("-inf")

    @property
    def counts_bytes(self) -> bool:
        return self.limits.bytes_per_second is not None

    def spend(self, records: int, size: int = 0) -> None:
        """A batch went through: the next one waits until it is paid for."""
        now = self.timers.time()
        if (rate := self.limits.records_per_second) is not None and records:
            self._records_ready = max(self._records_ready, now) + records / rate
        if (rate := self.limits.bytes_per_second) is not None and size:
            self._bytes_ready = max(self._bytes_ready, now) + size / rate

    def delay(self) -> float:
        """Seconds until the next batch may go (0: now)."""
        return max(0.0, max(self._records_ready, self._bytes_ready) - self.timers.time())

    def records_cap(self, default: int) -> int:
        """At most one second's records per read (a sink must not hold a huge batch for minutes)."""
        rate = self.limits.records_per_second
        return default if rate is None else max(1, min(default, int(rate)))

    def sleep(self, seconds: float) -> asyncio.Future[None]:
        """A future done after ``seconds`` on the pacer's timers; cancelling it cancels the timer."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not waiter.done():
                waiter.set_result(None)

        handle = self.timers.call_later(seconds, done)
        waiter.add_done_callback(lambda f: handle.cancel() if f.cancelled() else None)
        return waiter

    def throttled(self, seconds: float) -> None:
        counters = self.counters
        counters.throttles += 1
        counters.throttled_s += max(0.0, seconds)


def pacer_for(config: Mapping[str, str], counters: TaskCounters, timers: PacingTimers | None) -> Pacer | None:
    """A pacer only when the connector sets a limit: unlimited tasks pay nothing per batch."""
    limits = RateLimits.from_config(config)
    return Pacer(limits, counters, timers) if limits.active else None
