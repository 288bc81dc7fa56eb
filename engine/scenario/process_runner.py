"""Run a cluster scenario on real worker processes (``engine.testing.cluster``) and a broker.

The same file as the deterministic run, against the real thing: each worker is a
``connect-engine distributed`` process, the group is the broker's, time is real. Steps become
what an operator would do: REST calls to a running worker (followers forward to the leader),
``kill -9`` for ``kill_worker``, SIGTERM for ``stop_worker``, SIGSTOP/SIGCONT for
``partition``/``heal`` (the process misses its heartbeats and comes back), a sleep for
``advance``. Expectations are polled until they hold (a real rebalance takes seconds), callbacks
are read from the record file the instrumented connectors append to, and the invariants are the
same as in the deterministic run. ``inject`` needs the in-process fault kit, so a scenario with
one runs in the deterministic mode only (``applicable`` says why not).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.scenario.expect import ExpectationFailed, calls_match, cluster_cleanup, render_call
from engine.scenario.invariants import ClusterInvariants
from engine.scenario.model import Scenario, Step
from engine.scenario.runner import LogKind, ScenarioResult, StepFailed
from engine.scenario.verbs import CONNECTOR_VERBS, WORKER_VERBS, Action, bind
from engine.testing.cluster import HOST, WorkerCluster, WorkerProcess, free_port, request
from engine.testing.recording import Call

DEFAULT_TIMEOUT_S = 60.0
_POLL_S = 0.25
_UNCHECKABLE = ("offsets", "incarnation", "restart_scheduled")


class RequestFailed(Exception):
    """A step's REST call answered an error; ``expect: {error: ...}`` may follow (the message is checked)."""


def applicable(scenario: Scenario) -> str | None:
    """Why the scenario cannot run on processes, or None."""
    partitioned: set[str] = set()
    for step in scenario.steps:
        if step.verb == "partition":
            partitioned.add(str(step.args.get("worker")))
        elif step.verb == "heal":
            partitioned.discard(str(step.args.get("worker")))
        elif step.verb == "expect" and partitioned & set(step.args.get("assigned") or ()):
            return (
                f"step {step.index} expects what {', '.join(sorted(partitioned))} runs while it is cut off: "
                "SIGSTOP freezes a process, which stops nothing before it runs again, so only the "
                "in-process model shows it"
            )
        if step.verb == "inject":
            return f"step {step.index} injects a fault: that needs the in-process model"
        if step.verb == "record":
            return f"step {step.index} appends a raw config record: that needs the in-process model"
        if step.args.get("worker") == "leader":
            return f"step {step.index} names the leader: only the in-process model knows it"
        if step.verb == "expect" and any(key in step.args for key in _UNCHECKABLE):
            return f"step {step.index} checks {', '.join(k for k in _UNCHECKABLE if k in step.args)}: not over REST"
    return None


class ProcessScenarioRunner:
    """One run of one cluster scenario on worker processes sharing ``bootstrap``'s group."""

    def __init__(
        self,
        scenario: Scenario,
        bootstrap: str,
        *,
        directory: Path | None = None,
        overrides: dict[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if scenario.workers is None:
            raise ValueError(f"{scenario.path} is not a cluster scenario (no 'workers: N')")
        self.scenario = scenario
        self.bootstrap = bootstrap
        self.directory = directory
        self.overrides = dict(overrides or {})  # e.g. shorter session timeouts for a slow broker
        self.timeout = timeout
        self.cluster: WorkerCluster | None = None
        self.processes: dict[str, WorkerProcess] = {}
        self.ports: dict[str, int] = {}
        self._error: tuple[Step, str] | None = None
        self._stopped: set[str] = set()  # SIGSTOPped (partitioned)
        self._calls: list[Call] = []
        self._verbs: dict[str, Action] = {}
        self.invariants = ClusterInvariants(
            count=lambda: len(self._calls), name_of=self._name_of, retries_allowed=lambda connector: False
        )

    # ---- the run --------------------------------------------------------------------------

    async def run(self) -> ScenarioResult:
        result = ScenarioResult(self.scenario, LogKind.KAFKA)
        began = time.perf_counter()
        why_not = applicable(self.scenario)
        if why_not is not None:
            result.failure = f"cannot run on processes: {why_not}"
            return result
        with tempfile.TemporaryDirectory(prefix="connect-engine-cluster-") as scratch:
            directory = self.directory or Path(scratch)
            worker = {**self.scenario.worker, **self.overrides}
            delay = int(worker.pop("scheduled.rebalance.max.delay.ms", "300000"))
            self.cluster = WorkerCluster(self.bootstrap, directory, delay_ms=delay, extra=worker)
            target = RestTarget(self._any, self.cluster.record_file, self.timeout)
            self._verbs = {**bind(CONNECTOR_VERBS, target), **bind(WORKER_VERBS, self)}
            current: Step | None = None
            try:
                assert self.scenario.workers is not None
                names = [f"w{n}" for n in range(1, self.scenario.workers + 1)]
                # the first creates the internal topics, the others find them
                self._start(names[0])
                await self.cluster.started(self.processes[names[0]])
                for name in names[1:]:
                    self._start(name)
                await self.cluster.started(*self.processes.values())
                for step in self.scenario.steps:
                    current = step
                    await self._run_step(step)
                self._no_unexpected_error()
                self._check_invariants(current)
            except StepFailed as failed:
                result.failed_step, result.failure = failed.step, str(failed)
            except Exception as exc:  # reported against the step
                result.failed_step, result.failure = current, f"crashed with {type(exc).__name__}: {exc}"
            finally:
                for name in list(self._stopped):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.processes[name].process.pid, signal.SIGCONT)
                self.cluster.shutdown()
        result.seconds = time.perf_counter() - began
        return result

    def _no_unexpected_error(self) -> None:
        if self._error is not None:
            step, message = self._error
            raise StepFailed(step, f"raised {message} (no 'expect: {{error: ...}}' followed)")

    async def _run_step(self, step: Step) -> None:
        if self._error is not None and not (step.verb == "expect" and "error" in step.args):
            failed, message = self._error
            raise StepFailed(failed, f"raised {message}")
        try:
            if step.verb == "expect":
                await self._expect(step.args)
            else:
                if step.verb == "delete":
                    self._deleting(step.args["name"])
                await self._verbs[step.verb](step.args)
        except ExpectationFailed as exc:
            raise StepFailed(step, str(exc)) from None
        except RequestFailed as exc:
            self._error = (step, str(exc))
        self._check_invariants(step)

    def _check_invariants(self, step: Step | None) -> None:
        assert self.cluster is not None
        for recorded in self.cluster.calls()[len(self._calls) :]:
            self._calls.append(
                Call(
                    recorded["connector"],
                    recorded["unit"],
                    recorded["method"],
                    recorded.get("args", {}),
                    recorded.get("worker", ""),
                )
            )
        found = self.invariants.check(self._calls)
        if found:
            raise StepFailed(step, f"invariant broken: {found[0]}")

    def _deleting(self, connector: str) -> None:
        """What the DELETE writes first, for the invariants (they read no config topic here)."""
        self._check_invariants(None)
        self.invariants.record(f"pending-cleanup-{connector}", b"{}")

    # ---- workers --------------------------------------------------------------------------

    def _start(self, name: str) -> None:
        assert self.cluster is not None
        if name in self.processes and self.processes[name].alive:
            raise RequestFailed(f"ValueError: worker {name} is already running")
        if name not in self.ports:  # the same worker id when it comes back
            self.ports[name] = _port_above(max(self.ports.values(), default=0))
        self.processes[name] = self.cluster.start_worker(self.ports[name])

    def _process(self, name: str) -> WorkerProcess:
        process = self.processes.get(name)
        if process is None or not process.alive:
            raise RequestFailed(f"EngineNotRunning: Worker {name} is not running")
        return process

    def _name_of(self, worker_id: str) -> str:
        port = worker_id.rsplit(":", 1)[-1]
        return next((n for n, p in self.ports.items() if str(p) == port), worker_id)

    def _live(self) -> list[WorkerProcess]:
        return [
            self.processes[n]
            for n in sorted(self.processes)
            if self.processes[n].alive and n not in self._stopped
        ]

    def _any(self) -> WorkerProcess:
        live = self._live()
        if not live:
            raise RequestFailed("EngineNotRunning: no worker is running")
        return live[0]

    # ---- the worker verbs (verbs.WorkerFleet): signals, as an operator would --------------

    async def start_worker(self, name: str) -> None:
        self._start(name)
        assert self.cluster is not None
        await self.cluster.started(self.processes[name])

    async def stop_worker(self, name: str) -> None:
        await asyncio.to_thread(self._process(name).stop)

    async def kill_worker(self, name: str) -> None:
        self._check_invariants(None)
        process = self._process(name)
        self.invariants.killed(f"127.0.0.1:{process.port}")
        await asyncio.to_thread(process.kill)

    async def restart_worker(self, name: str) -> None:
        await self.stop_worker(name)
        await self.start_worker(name)

    async def partition(self, name: str) -> None:
        os.killpg(self._process(name).process.pid, signal.SIGSTOP)
        self._stopped.add(name)

    async def heal(self, name: str) -> None:
        os.killpg(self._process(name).process.pid, signal.SIGCONT)
        self._stopped.discard(name)

    async def rebalance(self) -> None:
        """No REST call forces one; the expectations that follow poll until the group is stable."""

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    # ---- expectations, polled -------------------------------------------------------------

    async def _expect(self, args: dict[str, Any]) -> None:
        if "error" in args:
            previous, self._error = self._error, None
            if previous is None:
                raise ExpectationFailed(f"the previous step raised nothing, expected {args['error']}")
            if "message" in args and str(args["message"]) not in previous[1]:
                raise ExpectationFailed(
                    f"the previous step raised {previous[1]}, expected a message containing "
                    f"{args['message']!r}"
                )
        checks = {k: v for k, v in args.items() if k not in ("error", "message", "timeout")}
        if not checks:
            return
        deadline = time.monotonic() + args.get("timeout", self.timeout)
        while True:
            wrong = await self._mismatches(checks)
            if not wrong:
                return
            if time.monotonic() >= deadline:
                raise ExpectationFailed("; ".join(wrong))
            await asyncio.sleep(_POLL_S)

    async def _mismatches(self, args: dict[str, Any]) -> list[str]:
        wrong: list[str] = []
        if "assigned" in args:
            seen = await self._running_units()
            wrong += [
                f"assigned: {w} runs {sorted(seen.get(w, set()))}, expected {sorted(units)}"
                for w, units in args["assigned"].items()
                if seen.get(w, set()) != set(units)
            ]
        name = args.get("connector")
        if name is None:
            return wrong
        process = self._any()
        code, status = await request(process, "GET", f"/connectors/{quote(name)}/status")
        status = status if code == 200 else None
        config_code, _ = await request(process, "GET", f"/connectors/{quote(name)}")
        absent = status is None and config_code == 404
        if "absent" in args and args["absent"] != absent:
            wrong.append(f"absent is {str(absent).lower()}, expected {str(args['absent']).lower()}")
        if "state" in args:
            state = "DESTROYED" if absent else (status["connector"]["state"] if status else None)
            if state != args["state"]:
                wrong.append(f"state is {state}, expected {args['state']}")
        tasks = [t["state"] for t in status["tasks"]] if status else []
        if "tasks" in args and tasks != args["tasks"]:
            wrong.append(f"task states are {tasks}, expected {args['tasks']}")
        if "task_count" in args:
            code, configs = await request(process, "GET", f"/connectors/{quote(name)}/tasks")
            count = len(configs) if code == 200 else 0
            if count != args["task_count"]:
                wrong.append(f"task count is {count}, expected {args['task_count']}")
        if "workers" in args and status is None:
            wrong.append("no status, so no workers")
        if "workers" in args and status is not None:
            want = args["workers"]
            if "connector" in want and self._name_of(status["connector"]["worker_id"]) != want["connector"]:
                wrong.append(
                    f"connector runs on {self._name_of(status['connector']['worker_id'])}, "
                    f"expected {want['connector']}"
                )
            got = [self._name_of(t["worker_id"]) for t in status["tasks"]]
            if "tasks" in want and got != want["tasks"]:
                wrong.append(f"tasks run on {got}, expected {want['tasks']}")
        if "restart_attempts" in args and status is not None:
            got_attempts = status["connector"].get("restart_attempts", 0)
            if got_attempts != args["restart_attempts"]:
                wrong.append(f"restart_attempts is {got_attempts}, expected {args['restart_attempts']}")
        if "task_restart_attempts" in args:
            attempts = [t.get("restart_attempts", 0) for t in status["tasks"]] if status else []
            if attempts != args["task_restart_attempts"]:
                wrong.append(f"task_restart_attempts is {attempts}, expected {args['task_restart_attempts']}")
        if "cleanup" in args:
            listings = []
            for live in self._live():
                code, cleanups = await request(live, "GET", "/connector-cleanups")
                listings.append(cleanups if code == 200 else [])
            got_cleanup = cluster_cleanup(listings, name)
            want_cleanup = args["cleanup"]
            if (want_cleanup is None) != (got_cleanup is None) or (
                want_cleanup and got_cleanup and any(got_cleanup.get(k) != v for k, v in want_cleanup.items())
            ):
                wrong.append(f"cleanup is {got_cleanup}, expected {want_cleanup}")
        self._check_invariants(None)
        calls = [c for c in self._calls if c.connector == name]
        if "calls" in args:
            mine = [c for c in calls if c.unit == "connector"]
            if not calls_match(args["calls"], mine):
                wrong.append(
                    f"connector calls were {[render_call(c) for c in mine]}, expected {args['calls']}"
                )
        for task, expected in args.get("task_calls", {}).items():
            mine = [c for c in calls if c.unit == f"task-{task}"]
            if not calls_match(expected, mine):
                wrong.append(f"task-{task} calls were {[render_call(c) for c in mine]}, expected {expected}")
        return [f"connector {name}: {w}" if not w.startswith("assigned") else w for w in wrong]

    async def _running_units(self) -> dict[str, set[str]]:
        code, body = await request(self._any(), "GET", "/connectors?expand=status")
        units: dict[str, set[str]] = {}
        if code != 200:
            return units
        for name, entry in body.items():
            status = entry["status"]
            if status["connector"]["state"] != "UNASSIGNED":
                units.setdefault(self._name_of(status["connector"]["worker_id"]), set()).add(name)
            for task in status["tasks"]:
                if task["state"] != "UNASSIGNED":
                    units.setdefault(self._name_of(task["worker_id"]), set()).add(f"{name}-{task['id']}")
        return units


class RestTarget:
    """The connector verbs as REST calls to a running worker (a follower forwards to the leader)."""

    def __init__(self, worker: Callable[[], WorkerProcess], record_file: Path, timeout: float) -> None:
        self.worker = worker
        self.record_file = record_file  # where the instrumented connectors append their calls
        self.timeout = timeout

    async def _call(self, method: str, path: str, body: Any = None) -> None:
        code, answer = await request(self.worker(), method, path, body, timeout=self.timeout)
        if code >= 400:
            message = answer.get("message", answer) if isinstance(answer, dict) else answer
            raise RequestFailed(f"HTTP {code}: {message}")

    def _recorded(self, config: dict[str, str]) -> dict[str, str]:
        return {**config, "test.record.file": str(self.record_file)}

    async def create(self, name: str, config: dict[str, str], initial_state: str | None) -> None:
        body: dict[str, Any] = {"name": name, "config": self._recorded(config)}
        if initial_state is not None:
            body["initial_state"] = initial_state
        await self._call("POST", "/connectors", body)

    async def update(self, name: str, config: dict[str, str]) -> None:
        await self._call("PUT", f"/connectors/{quote(name)}/config", self._recorded(config))

    async def patch(self, name: str, changes: dict[str, str | None]) -> None:
        await self._call("PATCH", f"/connectors/{quote(name)}/config", changes)

    async def pause(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{quote(name)}/pause")

    async def resume(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{quote(name)}/resume")

    async def stop(self, name: str) -> None:
        await self._call("PUT", f"/connectors/{quote(name)}/stop")

    async def restart(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        query = f"?includeTasks={str(include_tasks).lower()}&onlyFailed={str(only_failed).lower()}"
        await self._call("POST", f"/connectors/{quote(name)}/restart{query}")

    async def restart_task(self, name: str, task: int) -> None:
        await self._call("POST", f"/connectors/{quote(name)}/tasks/{task}/restart")

    async def delete(self, name: str) -> None:
        await self._call("DELETE", f"/connectors/{quote(name)}")


def _port_above(floor: int) -> int:
    """A free port above ``floor``: workers started later get higher ports, so worker ids
    (``127.0.0.1:port``, which the leader's plan orders members by) sort as the names w1, w2, ...
    do in the deterministic run, and both modes hand out the same work."""
    start = max(floor, free_port() if floor == 0 else floor) + 1
    for port in range(start, 65536):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port above {floor}")
