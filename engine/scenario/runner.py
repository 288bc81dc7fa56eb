"""Run a scenario against a fresh engine, one step at a time, recording the transition trace.

After every step the runner waits for the engine to settle, so each transition is attributed
to the step that caused it and a file prints the same trace on every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import structlog

from engine.api.errors import ConnectException
from engine.configlog.memory import MemoryConfigLog
from engine.engine import Engine
from engine.errors import EngineError, EngineNotRunning, SettleTimeout, short_message
from engine.herder.transition_feed import Subscription
from engine.scenario.expect import ExpectationFailed, check_connector, check_error
from engine.scenario.model import Scenario, Step
from engine.scenario.transition_trace import TraceLine, stamp
from engine.scenario.verbs import CONNECTOR_VERBS, IN_PROCESS_VERBS, Action, Args, EngineTarget, bind
from engine.storage.offsets import MemoryOffsetStore
from engine.testing.faults import FAULTS
from engine.testing.recording import CALLS
from engine.testing.timers import VirtualTimers

log = structlog.get_logger(component="scenario")

# Scenario workers stop quickly: a hung callback should cost a scenario a second, not the
# production defaults' 5-30 s. A scenario's own `worker:` section overrides these.
SCENARIO_WORKER_DEFAULTS = {
    "task.shutdown.graceful.timeout.ms": "1000",
    "connector.shutdown.graceful.timeout.ms": "1000",
    "connector.deleted.timeout.ms": "2000",
    "connector.callback.timeout.ms": "5000",
}


class LogKind(StrEnum):
    MEMORY = "memory"
    FILE = "file"
    KAFKA = "kafka"


class StepFailed(Exception):
    def __init__(self, step: Step | None, message: str) -> None:
        super().__init__(message)
        self.step = step


@dataclass
class ScenarioResult:
    scenario: Scenario
    log: LogKind
    trace: list[TraceLine] = field(default_factory=list)
    failed_step: Step | None = None
    failure: str | None = None
    seconds: float = 0.0
    seed: int | None = None  # cluster scenarios: the scheduler's seed (replays this run)
    rounds: list[str] = field(default_factory=list)  # cluster scenarios: each rebalance, leader and order

    @property
    def passed(self) -> bool:
        return self.failure is None

    def as_json(self) -> dict[str, Any]:
        failure = None
        if self.failure is not None:
            step = self.failed_step
            failure = {
                "step": step.index if step else None,
                "verb": step.verb if step else None,
                "message": self.failure,
            }
        body: dict[str, Any] = {
            "name": self.scenario.name,
            "file": self.scenario.path,
            "log": self.log.value,
            "passed": self.passed,
            "failure": failure,
        }
        if self.seed is not None:
            body.update(seed=self.seed, workers=self.scenario.workers, rounds=self.rounds)
        body["trace"] = [t.as_json() for t in self.trace]
        return body


class ScenarioRunner:
    """One run of one scenario. Uses the process-wide test kit (``CALLS``, ``FAULTS``): one at a time."""

    def __init__(
        self,
        scenario: Scenario,
        log: LogKind | str = LogKind.MEMORY,
        *,
        bootstrap_servers: str | None = None,
        settle_timeout: float = 60.0,
    ) -> None:
        self.scenario = scenario
        self.log_kind = LogKind(log)
        if self.log_kind is LogKind.KAFKA and not bootstrap_servers:
            raise ValueError("the kafka log needs bootstrap servers")
        self.bootstrap_servers = bootstrap_servers
        self.settle_timeout = settle_timeout
        self.engine: Engine | None = None
        self._feed: Subscription | None = None
        self._memory_log = MemoryConfigLog()
        self._memory_offsets = MemoryOffsetStore()
        self._trace: list[TraceLine] = []
        self._step = 0
        self._current: Step | None = None
        self._error: tuple[Step, BaseException] | None = None
        self._crash: asyncio.Task[None] | None = None
        self._timers: VirtualTimers | None = (
            None  # the running worker's: auto-restart backoffs on FAULTS.clock
        )
        target = EngineTarget(self._require)
        self._verbs: dict[str, Action] = {
            **bind(CONNECTOR_VERBS, target),
            **bind(IN_PROCESS_VERBS, target),
            "crash": self._crash_step,
            "restart_worker": self._restart_worker,
            "advance": self._advance,
        }

    # ---- the run --------------------------------------------------------------------------

    async def run(self) -> ScenarioResult:
        result = ScenarioResult(self.scenario, self.log_kind)
        began = time.perf_counter()
        CALLS.clear()
        await asyncio.to_thread(FAULTS.reset)  # may wait for released callbacks to leave
        FAULTS.on_crash = self._crash_requested(asyncio.get_running_loop())
        with tempfile.TemporaryDirectory(prefix="connect-engine-scenario-") as workdir:
            self._worker = self._worker_config(Path(workdir))
            try:
                await self._start_worker()
                for step in self.scenario.steps:
                    await self._run_step(step)
                self._no_unexpected_error()
            except StepFailed as failed:
                result.failed_step, result.failure = failed.step, str(failed)
            except (
                Exception
            ) as exc:  # an engine bug: reported against the step, the other scenarios still run
                log.exception("scenario.step_crashed", step=self._step)
                result.failed_step = self._current
                result.failure = f"crashed with {type(exc).__name__}: {exc}"
            finally:
                FAULTS.release_all()
                self._step = len(self.scenario.steps) + 1  # what the worker's final stop does is no step's
                await self._stop_worker()
                await asyncio.to_thread(FAULTS.reset)
        result.trace = self._trace
        result.seconds = time.perf_counter() - began
        return result

    def _worker_config(self, workdir: Path) -> dict[str, str]:
        worker = dict(SCENARIO_WORKER_DEFAULTS)
        if self.log_kind is LogKind.FILE:
            worker["config.storage.file.filename"] = str(workdir / "configs.log")
            worker["offset.storage.file.filename"] = str(workdir / "offsets.log")
        elif self.log_kind is LogKind.KAFKA:
            assert self.bootstrap_servers is not None
            worker["bootstrap.servers"] = self.bootstrap_servers
            worker["config.storage.topic"] = f"connect-engine-scenario-{uuid.uuid4().hex[:12]}"
        worker.update(self.scenario.worker)
        return worker

    def _no_unexpected_error(self) -> None:
        if self._error is not None:
            step, exc = self._error
            raise StepFailed(
                step,
                f"raised {type(exc).__name__}: {short_message(exc)} (no 'expect: {{error: ...}}' followed)",
            )

    async def _run_step(self, step: Step) -> None:
        self._step = step.index
        self._current = step
        if self._error is not None and not (step.verb == "expect" and "error" in step.args):
            failed, exc = self._error
            raise StepFailed(failed, f"raised {type(exc).__name__}: {short_message(exc)}")
        crash_before = self._crash
        try:
            if step.verb == "expect":
                await self._expect(step)
            else:
                await self._verbs[step.verb](step.args)
        except ExpectationFailed as exc:
            raise StepFailed(step, str(exc)) from None
        except (EngineError, ConnectException, ValueError) as exc:
            if self._crash is not None and self._crash is not crash_before:
                await self._crash  # the worker died under this step: that was the point
            else:
                self._error = (step, exc)
        await self._settle()

    async def _settle(self) -> None:
        if self._crash is not None:
            await self._crash
        engine = self.engine
        if engine is not None:
            try:
                await engine.settled(parked=FAULTS.parked, timeout=self.settle_timeout)
            except EngineNotRunning:
                pass
            except SettleTimeout as exc:  # a hung engine fails the step, not the whole replay
                self._collect()
                raise StepFailed(self._current, str(exc)) from None
        self._collect()

    def _collect(self) -> None:
        if self._feed is not None:
            self._trace.extend(stamp(self._feed.drain(), FAULTS.clock.now, self._step))

    # ---- the worker -----------------------------------------------------------------------

    async def _start_worker(self) -> None:
        memory = self.log_kind is LogKind.MEMORY
        self._timers = VirtualTimers(FAULTS.clock)  # a worker's timers die with it (crash or restart)
        engine = Engine(
            self._worker,
            config_log=self._memory_log if memory else None,
            offset_store=self._memory_offsets if memory else None,
            timers=self._timers,
        )
        self._feed = engine.transitions()
        await engine.start()
        self.engine = engine

    async def _stop_worker(self) -> None:
        engine, self.engine = self.engine, None
        if engine is not None:
            with contextlib.suppress(EngineError):
                await engine.shutdown()
        self._collect()
        self._feed = None

    def _crash_requested(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """What an injected ``crash`` calls from the callback's thread."""

        def crash() -> None:
            loop.call_soon_threadsafe(self._begin_crash)

        return crash

    def _begin_crash(self) -> None:
        if self._crash is None and self.engine is not None:
            self._crash = asyncio.get_running_loop().create_task(self._abort())

    async def _abort(self) -> None:
        engine, self.engine = self.engine, None
        if self._timers is not None:
            self._timers.clear()
        if engine is not None:
            log.info("scenario.worker_crashed", step=self._step)
            await engine.abort()
        self._collect()
        self._feed = None
        FAULTS.release_all()

    def _require(self) -> Engine:
        if self.engine is None:
            raise EngineNotRunning("The worker is down: it crashed and no restart_worker step followed")
        return self.engine

    # ---- the single worker's own verbs ----------------------------------------------------

    async def _crash_step(self, args: Args) -> None:
        self._require()
        self._begin_crash()

    async def _restart_worker(self, args: Args) -> None:
        if self.engine is not None:
            await self._stop_worker()  # a clean restart: connectors and tasks get plain stop()
        self._crash = None
        await self._start_worker()

    async def _advance(self, args: Args) -> None:
        self._collect()  # what happened before belongs to the earlier time
        FAULTS.advance(args["by"])
        if self._timers is not None and self.engine is not None:
            self._timers.run_due()  # e.g. auto-restarts whose backoff ends by then (the step then settles)

    async def _expect(self, step: Step) -> None:
        args = step.args
        if "error" in args:
            previous = self._error
            self._error = None
            error = previous[1] if previous is not None else None
            check_error(args, error, f"step {step.index - 1}")
        if "connector" in args:
            await check_connector(self.engine, args)
