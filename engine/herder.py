"""The herder: reads the config log, keeps its snapshot, and routes each change to its connector.

It is the only place that turns log records into lifecycle work (DESIGN decision 1): API calls
append records and then wait until the herder has applied them.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import structlog

from engine.configlog.base import ConfigLog
from engine.configlog.codec import decode, encode
from engine.configlog.records import ConfigRecord
from engine.configlog.snapshot import ConfigSnapshot
from engine.deletion import DeletionOutcome
from engine.errors import CorruptRecord, EngineNotRunning
from engine.messages import Boot, FromLog, Marker, Message, RunCleanup, Shutdown
from engine.metrics import EngineMetrics
from engine.storage.offsets import MemoryOffsetStore
from engine.storage.status import MemoryStatusStore
from engine.transitions_feed import TransitionEvent, TransitionFeed
from engine.unit import ConnectorUnit
from engine.worker_config import WorkerConfig
from states import TransitionRecord

if TYPE_CHECKING:
    from engine.worker.data_plane import DataPlane

log = structlog.get_logger(component="herder")


class Herder:
    """Owns every connector unit; lives inside the engine's TaskGroup until shutdown."""

    def __init__(self, config_log: ConfigLog, status: MemoryStatusStore, offsets: MemoryOffsetStore,
                 worker: WorkerConfig, tg: asyncio.TaskGroup, feed: TransitionFeed | None = None,
                 metrics: EngineMetrics | None = None, data: DataPlane | None = None) -> None:
        self.log = config_log
        self.data = data
        self.status = status
        self.metrics = metrics if metrics is not None else EngineMetrics(status)
        self._transition_counts = self.metrics.transitions.values
        self.offsets = offsets
        self.worker = worker
        self._tg = tg
        self.snapshot = ConfigSnapshot()
        self.feed = feed if feed is not None else TransitionFeed()
        self.skipped_records = 0
        self.read_end = 0  # one past the last log offset the reader has handled
        self._units: dict[str, ConnectorUnit] = {}
        self._unit_tasks: dict[str, asyncio.Task[None]] = {}
        self._applied: dict[str, int] = {}
        self._waiters: dict[str, list[tuple[int, asyncio.Future[None]]]] = {}
        self._deletions: dict[str, DeletionOutcome] = {}
        self._loop = asyncio.get_running_loop()
        self._failure: BaseException | None = None
        self._booted = False
        self._closing = False
        self._spawned: set[asyncio.Task[None]] = set()
        self._forget_spawned = self._spawned.discard
        self._plain_context = contextvars.Context()
        # Bound once (structlog's cache-on-first-use, per engine): the lazy module logger would
        # assemble a new bound logger for every transition, even when INFO is filtered out.
        self._transition_log = log.bind()

    # ---- UnitServices ---------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = self._tg.create_task(coro, name=name)
        self._spawned.add(task)
        # one shared callback and context: by default each registration copies the context
        task.add_done_callback(self._forget_spawned, context=self._plain_context)
        return task

    async def append(self, records: list[ConfigRecord]) -> int:
        return await self.log.append([encode(r) for r in records])

    def post(self, connector: str, message: Message) -> None:
        if self._closing and connector not in self._units:
            return
        self._unit(connector).mailbox.put(message)

    def post_threadsafe(self, connector: str, message: Message) -> None:
        self._loop.call_soon_threadsafe(self.post, connector, message)

    def published(self, record: TransitionRecord, trace: str | None) -> None:
        event = "connector.state_changed" if record.task is None else "task.state_changed"
        counts = self._transition_counts
        key = ("connector" if record.task is None else "task", record.trigger, record.from_state, record.to_state)
        counts[key] = counts.get(key, 0.0) + 1
        self._transition_log.info(event, connector=record.connector, task=record.task, trigger=record.trigger,
                                  from_state=record.from_state, to_state=record.to_state,
                                  worker=self.worker.worker_id)
        if self.feed.listened:
            self.feed.publish(TransitionEvent(record.connector, record.task, record.trigger, record.from_state,
                                              record.to_state, trace, time.time()))

    def applied(self, connector: str, offset: int) -> None:
        self._applied[connector] = max(offset, self._applied.get(connector, -1))
        waiters = self._waiters.get(connector)
        if not waiters:
            return
        remaining = []
        for wanted, future in waiters:
            if wanted <= offset:
                if not future.done():
                    future.set_result(None)
            else:
                remaining.append((wanted, future))
        if remaining:
            self._waiters[connector] = remaining
        else:
            del self._waiters[connector]

    def deletion_finished(self, outcome: DeletionOutcome) -> None:
        self.metrics.deletion(outcome.succeeded)
        self._deletions[outcome.connector] = outcome

    # ---- units ----------------------------------------------------------------------------

    @property
    def live_units(self) -> list[str]:
        """Connectors that have a unit coroutine right now (diagnostics, leak checks)."""
        return sorted(self._units)

    def _unit(self, name: str) -> ConnectorUnit:
        unit = self._units.get(name)
        if unit is None:
            unit = self._units[name] = ConnectorUnit(name, self)
            self._unit_tasks[name] = self._tg.create_task(self._run_unit(unit), name=f"unit:{name}")
        return unit

    async def _run_unit(self, unit: ConnectorUnit) -> None:
        try:
            await unit.run()
        finally:
            if self._units.get(unit.name) is unit:
                del self._units[unit.name]
                del self._unit_tasks[unit.name]
                left = unit.mailbox.drain()
                if not self._closing:
                    self._hand_over(unit.name, left)

    def _hand_over(self, name: str, left: list[Message]) -> None:
        """Messages a destroyed unit left: log events start a new incarnation; the rest is stale.

        Offsets alone (markers, or the last records of a deletion) are applied here: a new unit
        started only to acknowledge them would wait on its mailbox forever.
        """
        if any(isinstance(m, (FromLog, Boot, RunCleanup)) for m in left):
            for message in left:
                self.post(name, message)
            return
        for message in left:
            if isinstance(message, Marker):
                self.applied(name, message.offset)

    # ---- reading the log ------------------------------------------------------------------

    async def run(self, ready: asyncio.Future[None]) -> None:
        """Replay the log into the snapshot, boot what it holds, then apply new records live."""
        try:
            end = await self.log.end_offset()
            if end == 0:
                self._boot()
                ready.set_result(None)
            async for entry in self.log.entries():
                self.read_end = entry.offset + 1
                try:
                    record = decode(entry.key, entry.value)
                except CorruptRecord as exc:
                    self.skipped_records += 1
                    log.warning("configlog.record_skipped", key=exc.key, reason=exc.reason, offset=entry.offset)
                    record = None
                if not self._booted:
                    if record is not None:
                        self.snapshot.apply(record)
                    if entry.offset + 1 >= end:
                        self._boot()
                        ready.set_result(None)
                    continue
                if record is not None:
                    self._route(record, entry.offset)
        except BaseException as exc:
            self._fail_waiters(exc)
            raise

    def _route(self, record: ConfigRecord, offset: int) -> None:
        event = self.snapshot.apply(record)
        name = getattr(record, "connector", None)
        if event is not None:
            self.post(event.connector, FromLog(event, offset))
        elif name is not None:
            if name in self._units:
                self.post(name, Marker(offset))
            else:
                self.applied(name, offset)

    def _boot(self) -> None:
        self._booted = True
        snap = self.snapshot
        log.info("configlog.caught_up", connectors=len(snap.connectors), pending_cleanups=len(snap.pending_cleanups),
                 skipped=self.skipped_records)
        for name, config in snap.connectors.items():
            self.post(name, Boot(config, snap.target(name), snap.tasks.get(name, ()), snap.applied.get(name)))
        for name, record in snap.pending_cleanups.items():
            if name not in snap.connectors:
                self.post(name, RunCleanup(record))

    # ---- quiescence ------------------------------------------------------------------------

    def busy_count(self, parked: Callable[[str, str], bool]) -> int:
        """Units handling a message plus runners in flight: 0 means nothing will change by itself."""
        units = list(self._units.values())
        handling = sum(1 for unit in units if not unit.waiting or len(unit.mailbox))
        return handling + sum(unit.busy_runners(parked) for unit in units)

    # ---- what API calls wait on -----------------------------------------------------------

    async def wait_applied(self, connector: str, offset: int) -> None:
        if self._failure is not None:
            raise EngineNotRunning(f"The engine has stopped: {self._failure!r}")
        if self._applied.get(connector, -1) >= offset:
            return
        future: asyncio.Future[None] = self._loop.create_future()
        self._waiters.setdefault(connector, []).append((offset, future))
        await future

    def deletion_outcome(self, connector: str) -> DeletionOutcome | None:
        """The outcome of the connector's last deletion, handed over once (then forgotten)."""
        return self._deletions.pop(connector, None)

    def _fail_waiters(self, exc: BaseException) -> None:
        self._failure = exc
        for waiters in self._waiters.values():
            for _, future in waiters:
                if not future.done():
                    future.set_exception(EngineNotRunning(f"The engine has stopped: {exc!r}"))
        self._waiters.clear()

    def abort(self) -> None:
        """A crash: abandon every runner so nothing they do later is written anywhere."""
        self._closing = True
        self._fail_waiters(EngineNotRunning("The engine was aborted"))
        for unit in self._units.values():
            unit.abandon_runners()
        self.feed.close()

    async def shutdown(self) -> None:
        """Stop every connector and task with plain ``stop()`` (statuses UNASSIGNED)."""
        self._closing = True
        for name in list(self._units):
            self.post(name, Shutdown())
        tasks = list(self._unit_tasks.values())
        if tasks:
            await asyncio.wait(tasks)
        for task in list(self._spawned):
            task.cancel()
        self.feed.close()
