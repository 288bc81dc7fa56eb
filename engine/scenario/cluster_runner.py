"""Run a cluster scenario (``workers: N``) deterministically: N engines in this process, one seed.

Each worker is a real ``Engine`` in distributed mode: its herder, its ``Cluster`` applying
assignments, the leader's real planner. What the broker would do is done here, in-process:
the config topic is one shared log (``shared_log``), the status topic one shared status store,
the group coordinator a ``VirtualGroup`` whose open choices (leader, the order members apply a
round's assignments) come from ``random.Random(seed)``, and time is the scenario's virtual clock
(session expiry, the rebalance delay, auto-restart backoffs). After every step, and after every
member applied its part of a round, the runner waits until all workers are quiet, so a seed
gives the same trace on every run; the cluster invariants (``invariants``) are checked each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import Callable
from typing import Any

import structlog

from engine.api.errors import ConnectException
from engine.config.worker import WorkerConfig
from engine.distributed.member import MemberFactory
from engine.engine import Engine
from engine.errors import EngineError, EngineNotRunning, short_message
from engine.herder.transition_feed import Subscription
from engine.scenario.expect import ExpectationFailed, check_connector, check_error, cluster_cleanup
from engine.scenario.in_process_rest import InProcessRestClient
from engine.scenario.invariants import ClusterInvariants
from engine.scenario.model import Scenario, Step
from engine.scenario.runner import SCENARIO_WORKER_DEFAULTS, LogKind, ScenarioResult, StepFailed
from engine.scenario.shared_log import SharedConfigLog
from engine.scenario.transition_trace import TraceLine, stamp
from engine.scenario.verbs import CONNECTOR_VERBS, IN_PROCESS_VERBS, WORKER_VERBS, Action, EngineTarget, bind
from engine.scenario.virtual_group import RebalanceStorm, VirtualGroup
from engine.storage.offsets import MemoryOffsetStore
from engine.storage.status import MemoryStatusStore
from engine.testing.faults import FAULTS
from engine.testing.recording import CALLS
from engine.testing.timers import VirtualTimers
from engine.topics.memory import MemoryTopics

log = structlog.get_logger(component="scenario")

PORT = 8083
_QUIET_POLLS = 5
_QUIET_POLL_S = 0.002
_FAULTY = ("test.fail.deleted", "test.block.deleted.ms", "test.exit.deleted")


def worker_names(count: int) -> list[str]:
    return [f"w{n}" for n in range(1, count + 1)]


class ClusterScenarioRunner:
    """One seeded run of one cluster scenario. Uses the process-wide test kit: one run at a time."""

    def __init__(self, scenario: Scenario, seed: int | None = None, *, settle_timeout: float = 60.0) -> None:
        if scenario.workers is None:
            raise ValueError(f"{scenario.path} is not a cluster scenario (no 'workers: N')")
        self.scenario = scenario
        self.seed = seed if seed is not None else (scenario.seed or 0)
        self.settle_timeout = settle_timeout
        self.rng = random.Random(self.seed)
        self.group = VirtualGroup(self.rng, FAULTS.clock)
        self.invariants = ClusterInvariants(
            count=lambda: len(CALLS), name_of=self._name_of, retries_allowed=self._retries_allowed
        )
        self.log = SharedConfigLog(self.invariants.record)
        self.status = MemoryStatusStore()  # the status topic every worker reads and writes
        self.offsets = MemoryOffsetStore()  # the offsets topic
        self.engines: dict[str, Engine] = {}  # live workers (running or partitioned), by name
        self._starting: dict[str, asyncio.Task[None]] = {}
        self._timers: dict[str, VirtualTimers] = {}
        self._rest: dict[str, InProcessRestClient] = {}
        self._feeds: dict[str, Subscription] = {}
        self._trace: list[TraceLine] = []
        self._step = 0
        self._phase = 0
        self._current: Step | None = None
        self._error: tuple[Step, BaseException] | None = None
        self._faulty_deleted: set[str] = set()
        self._kills: list[asyncio.Task[None]] = []
        self._partitioned: list[str] = []  # ``heal: leader`` heals the leader cut off last
        target = EngineTarget(self._leader)  # connector verbs go where REST forwarding would send them
        self._verbs: dict[str, Action] = {
            **bind(CONNECTOR_VERBS, target),
            **bind(IN_PROCESS_VERBS, target),
            **bind(WORKER_VERBS, self),
        }

    # ---- the run --------------------------------------------------------------------------

    async def run(self) -> ScenarioResult:
        result = ScenarioResult(self.scenario, LogKind.MEMORY, seed=self.seed)
        began = time.perf_counter()
        CALLS.clear()
        await asyncio.to_thread(FAULTS.reset)
        FAULTS.on_crash = self._crash_requested(asyncio.get_running_loop())
        try:
            assert self.scenario.workers is not None
            for name in worker_names(self.scenario.workers):
                self._launch(name)
            await self._settle()
            for step in self.scenario.steps:
                await self._run_step(step)
            self._no_unexpected_error()
        except StepFailed as failed:
            result.failed_step, result.failure = failed.step, str(failed)
        except Exception as exc:  # an engine bug: reported against the step
            log.exception("scenario.step_crashed", step=self._step)
            result.failed_step = self._current
            result.failure = f"crashed with {type(exc).__name__}: {exc}"
        finally:
            FAULTS.release_all()
            self._step = len(self.scenario.steps) + 1
            await self._stop_all()
            await asyncio.to_thread(FAULTS.reset)
        if result.failure is None and self.invariants.violations:  # what the final stops revealed
            result.failure = "invariant broken: " + self.invariants.violations[0]
        result.trace = self._trace
        result.rounds = list(self.group.rounds)
        result.seconds = time.perf_counter() - began
        return result

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
        self._phase = 0
        if self._error is not None and not (step.verb == "expect" and "error" in step.args):
            failed, exc = self._error
            raise StepFailed(failed, f"raised {type(exc).__name__}: {short_message(exc)}")
        try:
            if step.verb == "expect":
                await self._expect(step)
            else:
                self._note_faulty_deleted(step)
                await self._verbs[step.verb](step.args)
        except ExpectationFailed as exc:
            raise StepFailed(step, str(exc)) from None
        except (EngineError, ConnectException, ValueError) as exc:
            self._error = (step, exc)
        await self._settle()

    def _note_faulty_deleted(self, step: Step) -> None:
        """A connector whose ``deleted()`` is made to fail (a fault, or its test keys when it is
        deleted) may have its cleanup run more than once: the invariants allow it that."""
        args = step.args
        if step.verb == "inject" and args["action"] != "clear" and args["callback"] == "deleted":
            self._faulty_deleted.add(args["connector"])
        elif step.verb == "delete":
            config = self._leader().herder.snapshot.connectors.get(args["name"], {})
            if any(config.get(key, "false") not in ("", "false") for key in _FAULTY):
                self._faulty_deleted.add(args["name"])

    # ---- settling -------------------------------------------------------------------------

    async def _settle(self) -> None:
        """Quiet, then every rebalance round that is due, each member's part followed by quiet."""
        await self._phase_done()
        try:
            await self.group.settle(self._phase_done)
        except RebalanceStorm as exc:
            raise StepFailed(self._current, str(exc)) from None
        for name, task in list(self._starting.items()):
            if task.done():
                del self._starting[name]
                await task  # a start that failed fails the step

    async def _phase_done(self) -> None:
        for task in list(self._kills):
            await task
        await self._quiet()
        self._collect()
        self._phase += 1
        found = self.invariants.check(CALLS.all())
        if found:
            raise StepFailed(self._current, f"invariant broken: {found[0]}")

    async def _quiet(self) -> None:
        """Every worker has read the whole log, applied its assignment, and has nothing in flight
        but callbacks blocked on purpose (or task configs waiting for a leader that is down).

        ``settle_timeout`` bounds a stretch without progress (no callback made, no record
        written), not the whole wait: thousands of connectors starting take longer, and move."""
        loop = asyncio.get_running_loop()
        calm, progress = 0, self._progress()
        deadline = loop.time() + self.settle_timeout
        while calm < _QUIET_POLLS:
            calm = calm + 1 if self._all_quiet() else 0
            await asyncio.sleep(0 if calm else _QUIET_POLL_S)
            now, seen = loop.time(), self._progress()
            if seen != progress:
                progress, deadline = seen, now + self.settle_timeout
            elif now > deadline:
                raise StepFailed(
                    self._current, f"the cluster did not settle: no progress for {self.settle_timeout:g} s"
                )

    def _progress(self) -> tuple[int, int]:
        return len(CALLS), len(self.log.entries)

    def _all_quiet(self) -> bool:
        end = len(self.log.entries)
        for name, engine in self.engines.items():
            starting = name in self._starting and not self._starting[name].done()
            member = self.group.by_worker.get(name)
            if starting and (member is None or not member.member_id):
                return False  # not in the group yet: a round now would leave it out by chance
            try:
                herder = engine.herder
            except EngineNotRunning:
                if starting:
                    return False
                continue
            rest = self._rest[name]

            def parked(connector: str, unit: str, rest: InProcessRestClient = rest) -> bool:
                return FAULTS.parked(connector, unit) or self._stalled(rest, connector)

            cluster = engine.cluster
            if herder.busy_count(parked) or herder.read_end < end or (cluster is not None and cluster.busy):
                return False
        return True

    def _stalled(self, rest: InProcessRestClient, connector: str) -> bool:
        target = rest.stalled.get(connector)
        return target is not None and target not in self.engines

    def _collect(self) -> None:
        lines = [line for name in sorted(self._feeds) for line in self._drain(name, self._feeds[name])]
        lines.sort(key=_canonical)
        self._trace.extend(lines)

    def _drain(self, name: str, feed: Subscription) -> list[TraceLine]:
        """Worker ``name``'s transitions since the last drain, stamped with the step and phase."""
        lines = stamp(feed.drain(), FAULTS.clock.now, self._step)
        return [dataclasses.replace(line, worker=name, phase=self._phase) for line in lines]

    # ---- workers --------------------------------------------------------------------------

    def _config(self, name: str) -> dict[str, str]:
        return {
            **SCENARIO_WORKER_DEFAULTS,
            "group.id": "scenario-cluster",
            "bootstrap.servers": "in-process:9092",
            "config.storage.topic": "scenario-configs",
            "listeners": f"http://{name}:{PORT}",
            **self.scenario.worker,
        }

    def _launch(self, name: str) -> None:
        """Start worker ``name``: it opens, reads the log and joins; its first assignment comes with
        the next round (a start waits for it without holding up the step)."""
        if name in self.engines:
            raise ValueError(f"worker {name} is already running")
        config = self._config(name)
        worker = WorkerConfig.parse(config)
        timers = VirtualTimers(FAULTS.clock)
        rest = InProcessRestClient(worker, self._reachable_engine, name)
        membership: MemberFactory = self.group.factory(name)
        engine = Engine(
            config,
            config_log=self.log.view(),
            offset_store=self.offsets,
            topics=MemoryTopics(),
            timers=timers,
            status_store=self.status,
            membership=membership,
            rest_client=rest,
        )
        self._timers[name], self._rest[name] = timers, rest
        self._feeds[name] = engine.transitions()
        self.engines[name] = engine
        self._starting[name] = asyncio.get_running_loop().create_task(engine.start(), name=f"start-{name}")

    def _reachable_engine(self, name: str) -> Engine | None:
        return self.engines.get(name)

    def _require(self, name: str) -> Engine:
        engine = self.engines.get(name)
        if engine is None:
            raise EngineNotRunning(f"Worker {name} is not running")
        return engine

    async def _shutdown(self, name: str) -> None:
        engine = self._require(name)
        task = self._starting.pop(name, None)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await task
        with contextlib.suppress(EngineError):
            await engine.shutdown()
        del self.engines[name]
        self._collect()
        self._feeds.pop(name, None)

    async def _kill(self, name: str) -> None:
        """As a SIGKILL: no stop(), no status, no LeaveGroup; the group notices when the session expires."""
        engine = self.engines.pop(name, None)
        if engine is None:
            return
        self.invariants.killed(engine.worker.worker_id)
        self.group.kill(name)
        self._timers[name].clear()
        log.info("scenario.worker_killed", worker=name, step=self._step)
        task = self._starting.pop(name, None)
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await task
        await engine.abort()
        self._collect_one(name)
        FAULTS.release_all()

    def _collect_one(self, name: str) -> None:
        feed = self._feeds.pop(name, None)
        if feed is not None:
            self._trace.extend(self._drain(name, feed))

    async def _stop_all(self) -> None:
        for task in list(self._kills):
            with contextlib.suppress(Exception):
                await task
        for name in sorted(self.engines):
            with contextlib.suppress(Exception):
                await self._shutdown(name)
        self.invariants.check(CALLS.all())

    def _crash_requested(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        """What an injected ``crash`` calls from the callback's thread: that callback's worker dies."""

        def crash() -> None:
            worker_id = str(structlog.contextvars.get_contextvars().get("worker", ""))
            loop.call_soon_threadsafe(self._begin_kill, self._name_of(worker_id))

        return crash

    def _begin_kill(self, name: str) -> None:
        if name in self.engines:
            self._kills.append(asyncio.get_running_loop().create_task(self._kill(name)))

    def _name_of(self, worker_id: str) -> str:
        return worker_id.split(":", 1)[0]

    def _retries_allowed(self, connector: str) -> bool:
        return connector in self._faulty_deleted

    def _leader(self) -> Engine:
        """Where a REST request ends up: the leader (any worker forwards leader-only requests to it)."""
        leader = self.group.leader_worker
        if leader is None or leader not in self.engines:
            raise EngineNotRunning("No reachable leader: the group has none right now")
        return self.engines[leader]

    # ---- the worker verbs (verbs.WorkerFleet) ---------------------------------------------

    def _named(self, name: str) -> str:
        """The step's worker; ``leader`` means whichever worker leads now (the seed chose it)."""
        if name != "leader":
            return name
        leader = self.group.leader_worker
        if leader is None:
            raise EngineNotRunning("No leader: the group has none right now")
        return leader

    async def start_worker(self, name: str) -> None:
        self._launch(self._named(name))

    async def stop_worker(self, name: str) -> None:
        await self._shutdown(self._named(name))

    async def kill_worker(self, name: str) -> None:
        name = self._named(name)
        self._require(name)
        await self._kill(name)

    async def restart_worker(self, name: str) -> None:
        name = self._named(name)
        await self._shutdown(name)
        self._launch(name)

    async def partition(self, name: str) -> None:
        name = self._named(name)
        self._require(name)
        self.group.partition(name)
        self._partitioned.append(name)

    async def heal(self, name: str) -> None:
        name = self._partitioned.pop() if name == "leader" and self._partitioned else self._named(name)
        self._require(name)
        self.group.heal(name)

    async def rebalance(self) -> None:
        leader = self.group.leader
        if leader is None:
            raise EngineNotRunning("No group to rebalance: no worker has joined")
        self.group.members[leader].request_rejoin()

    async def advance(self, seconds: float) -> None:
        """Move the clock to each session expiry and cut-off on the way and to the end, settling at each stop;
        timers due by a stop fire there (backoffs carry random jitter: stopping at each would make
        the trace's times depend on it)."""
        self._collect()
        target = FAULTS.clock.now + seconds
        while True:
            due = [m.expires_at for m in self.group.members.values() if m.expires_at is not None]
            due += self.group.cut_offs_due()
            upcoming = min([t for t in due if t > FAULTS.clock.now] + [target])
            FAULTS.advance(upcoming - FAULTS.clock.now)
            for name in sorted(self.engines):
                self._timers[name].run_due()
            self.group.cut_off()
            self.group.expire()
            await self._settle()
            if FAULTS.clock.now >= target:
                return

    # ---- expectations ---------------------------------------------------------------------

    async def _expect(self, step: Step) -> None:
        args = step.args
        if "error" in args:
            previous, self._error = self._error, None
            check_error(args, previous[1] if previous is not None else None, f"step {step.index - 1}")
        if "assigned" in args:
            self._check_assigned(args["assigned"])
        if "workers" in args:
            self._check_workers(args["connector"], args["workers"])
        if "cleanup" in args:
            self._check_cleanup(args["connector"], args["cleanup"])
        if "connector" in args:
            engine = self._observer()
            await check_connector(engine, {k: v for k, v in args.items() if k not in ("workers", "cleanup")})

    def _observer(self) -> Engine | None:
        """A worker to read the cluster through: the leader, else any running worker."""
        with contextlib.suppress(EngineNotRunning):
            return self._leader()
        return next((self.engines[n] for n in sorted(self.engines)), None)

    def _check_cleanup(self, connector: str, expected: dict[str, Any] | None) -> None:
        """The cluster's view: each worker lists what it knows (``GET /connector-cleanups``), the
        worker running a cleanup knows more than the others' PENDING."""
        got = cluster_cleanup([self.engines[n].connector_cleanups() for n in sorted(self.engines)], connector)
        if (expected is None) != (got is None) or (
            expected and got and any(got.get(k) != v for k, v in expected.items())
        ):
            raise ExpectationFailed(f"connector {connector}: cleanup is {got}, expected {expected}")

    def running_units(self) -> dict[str, set[str]]:
        """Per worker, the units whose status says that worker runs them (not UNASSIGNED)."""
        units: dict[str, set[str]] = {}
        for connector in self.status.connector_names():
            status = self.status.connector(connector)
            if status is not None and status.state != "UNASSIGNED":
                units.setdefault(self._name_of(status.worker_id), set()).add(connector)
            for task, value in self.status.tasks(connector).items():
                if value.state != "UNASSIGNED":
                    units.setdefault(self._name_of(value.worker_id), set()).add(f"{connector}-{task}")
        return units

    def _check_assigned(self, expected: dict[str, list[str]]) -> None:
        seen = self.running_units()
        wrong = [
            f"{worker} runs {sorted(seen.get(worker, set()))}, expected {sorted(units)}"
            for worker, units in expected.items()
            if seen.get(worker, set()) != set(units)
        ]
        if wrong:
            raise ExpectationFailed("assigned: " + "; ".join(wrong) + f" (rounds: {self.group.rounds[-3:]})")

    def _check_workers(self, connector: str, expected: dict[str, Any]) -> None:
        wrong = []
        status = self.status.connector(connector)
        if "connector" in expected:
            got = self._name_of(status.worker_id) if status is not None else None
            if got != expected["connector"]:
                wrong.append(f"connector runs on {got}, expected {expected['connector']}")
        if "tasks" in expected:
            tasks = self.status.tasks(connector)
            got_tasks = [self._name_of(tasks[n].worker_id) for n in sorted(tasks)]
            if got_tasks != expected["tasks"]:
                wrong.append(f"tasks run on {got_tasks}, expected {expected['tasks']}")
        if wrong:
            raise ExpectationFailed(f"connector {connector}: " + "; ".join(wrong))


def _canonical(line: TraceLine) -> tuple[int, int, str, int, int, str]:
    """Within a step: by phase (each member's part of a round is one), then as ``stamp`` orders a
    worker's lines, then by worker; a unit's own lines on one worker keep their order (stable sort)."""
    if line.task is not None:
        return (line.step, line.phase, line.connector, 1, line.task, line.worker)
    return (line.step, line.phase, line.connector, 2 if line.to_state == "DESTROYED" else 0, 0, line.worker)
