"""A rebalance round at 10,000 connectors, in process: what the leader's plan costs, and the longest
stall of the event loop while one worker applies or revokes its assignment.

(a) ``planner.plan`` for C connectors x 2 tasks over 3, 10 and 50 members: a first round (nothing
    owned), a steady round (everything owned, one new connector), a member lost (its work held
    for ``scheduled.rebalance.max.delay.ms`` = 0: handed out at once) and a member joining (the
    others' excess revoked).
(b) One embedded distributed worker (the real ``Engine``, herder, actors and ``Cluster``; an
    in-process member hands it assignments, as the scenario runner's virtual group does) applies an
    assignment of 3,000 and of 10,000 connectors x 2 tasks (the test kit's source, whose poll parks),
    then has it all revoked; and reads one new connector's config record with 10,000 in its
    snapshot. A probe coroutine sleeps 1 ms in a loop and records how late it wakes: its worst
    overshoot is the longest a REST request could have waited behind one callback.

    python bench/rebalance_round.py [--connectors 10000] [--worker-sizes 3000 10000]
        [--members 3 10 50] [--repeat 5] [--profile] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import structlog

from bench.report import append_to
from engine.configlog.codec import encode
from engine.configlog.memory import MemoryConfigLog
from engine.configlog.records import ConfigRecord, ConnectorConfigRecord, TaskCommitRecord, TaskConfigRecord
from engine.distributed.member import Planner
from engine.distributed.planner import ClusterWork, plan
from engine.distributed.protocol import Assignment, ClusterView, JoinMetadata, Work
from engine.distributed.settings import ClusterSettings
from engine.engine import Engine
from engine.storage.offsets import MemoryOffsetStore
from engine.storage.status import MemoryStatusStore
from engine.testing.faults import FAULTS
from engine.topics.memory import MemoryTopics

TASKS = 2
_TASK_CLASS = "engine.testing.recording.RecordingSourceTask"  # as the connector's leader writes them
_CONFIG = {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": str(TASKS)}

# ---- (a) the leader's plan ----------------------------------------------------------------------


def _work(connectors: int) -> ClusterWork:
    names = [f"c{n}" for n in range(connectors)]
    return ClusterWork(frozenset(names), frozenset((c, t) for c in names for t in range(TASKS)))


NOTHING = Work()
NO_VIEW = ClusterView()


def _meta(worker: str, owned: Work = NOTHING, view: ClusterView = NO_VIEW) -> JoinMetadata:
    return JoinMetadata(worker, f"http://{worker}:8083", 0, owned, frozenset(), view)


def _members(count: int) -> list[str]:
    return [f"w{n:02d}" for n in range(count)]


def _settled(work: ClusterWork, workers: list[str]) -> tuple[dict[str, JoinMetadata], ClusterView]:
    """Every member owning its share, as after a first round."""
    first = plan(
        {w: _meta(w) for w in workers},
        work,
        leader=workers[0],
        generation=1,
        config_offset=0,
        now_ms=0,
        delay_ms=0,
    )
    view = first[workers[0]].view
    return {w: _meta(w, first[w].assigned, view) for w in workers}, view


def plan_cases(connectors: int, members: int) -> dict[str, Callable[[], object]]:
    """The four rounds, each a call to time (their inputs built beforehand)."""
    work = _work(connectors)
    workers = _members(members)
    settled, view = _settled(work, workers)
    grown = _work(connectors + 1)
    lost = {w: settled[w] for w in workers[:-1]}
    joining = {**settled, "w99": _meta("w99", Work(), view)}

    def run(metas: Mapping[str, JoinMetadata], w: ClusterWork) -> Callable[[], object]:
        return lambda: plan(metas, w, leader=workers[0], generation=2, config_offset=0, now_ms=0, delay_ms=0)

    return {
        "first round": run({w: _meta(w) for w in workers}, work),
        "steady, one new connector": run(settled, grown),
        "a member lost": run(lost, work),
        "a member joining": run(joining, work),
    }


def time_plans(connectors: int, members: list[int], repeat: int) -> list[tuple[str, int, float]]:
    rows = []
    for count in members:
        for case, call in plan_cases(connectors, count).items():
            times = []
            for _ in range(repeat):
                began = time.perf_counter()
                call()
                times.append(time.perf_counter() - began)
            rows.append((case, count, statistics.median(times) * 1000))
    return rows


# ---- (b) one worker applying an assignment --------------------------------------------------------


@dataclass
class InProcessMember:
    """The ``Membership`` seam, driven by the bench: it hands the worker whatever assignment it is told."""

    join_metadata: Callable[[], JoinMetadata]
    planner: Planner
    on_assignment: Callable[[Assignment, int], None]
    on_cut_off: Callable[[], None]
    started: asyncio.Event
    rejoins: int = 0

    async def start(self) -> None:
        self.started.set()

    async def stop(self) -> None:
        return None

    def request_rejoin(self) -> None:
        self.rejoins += 1

    def request_rejoin_for_change(self) -> None:
        self.rejoins += 1

    def in_contact(self) -> bool:
        return True


class LoopLag:
    """Sleeps 1 ms in a loop; the worst overshoot is the longest one turn of the loop held it (give or
    take the probe's own tick), the 99th percentile what most requests would have seen at worst."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _probe(self) -> None:
        while True:
            began = time.perf_counter()
            await asyncio.sleep(0.001)
            self.lags.append(time.perf_counter() - began - 0.001)

    @property
    def worst_ms(self) -> float:
        return max(self.lags, default=0.0) * 1000

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.lags)
        return ordered[int(len(ordered) * 0.99)] * 1000 if ordered else 0.0

    def __enter__(self) -> LoopLag:
        self._task = asyncio.get_running_loop().create_task(self._probe())
        return self

    def __exit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


def _records(names: list[str]) -> list[ConfigRecord]:
    records: list[ConfigRecord] = []
    for name in names:
        records.append(ConnectorConfigRecord(name, {**_CONFIG, "name": name}))
        records.extend(
            TaskConfigRecord(
                name, n, {"connector.name": name, "task.index": str(n), "task.class": _TASK_CLASS}
            )
            for n in range(TASKS)
        )
        records.append(TaskCommitRecord(name, TASKS))
    return records


@dataclass
class WorkerRun:
    connectors: int
    apply_s: float = 0.0
    apply_stall_ms: float = 0.0
    apply_p99_ms: float = 0.0
    revoke_s: float = 0.0
    revoke_stall_ms: float = 0.0
    revoke_p99_ms: float = 0.0
    record_stall_ms: float = 0.0


async def worker_round(connectors: int, profile: cProfile.Profile | None = None) -> WorkerRun:
    """Start a worker on a log of ``connectors``, hand it all of them, then take them all back."""
    result = WorkerRun(connectors)
    names = [f"c{n}" for n in range(connectors)]
    log = MemoryConfigLog()
    await log.append([encode(r) for r in _records(names)])
    members: list[InProcessMember] = []
    started = asyncio.Event()

    def member(
        settings: ClusterSettings,
        join_metadata: Callable[[], JoinMetadata],
        planner: Planner,
        on_assignment: Callable[[Assignment, int], None],
        on_cut_off: Callable[[], None],
    ) -> InProcessMember:
        members.append(InProcessMember(join_metadata, planner, on_assignment, on_cut_off, started))
        return members[-1]

    engine = Engine(
        {
            "group.id": "bench-rounds",
            "bootstrap.servers": "in-process:9092",
            "config.storage.topic": "bench-configs",
            "listeners": "http://w1:8083",
            "task.shutdown.graceful.timeout.ms": "120000",
        },
        config_log=log,
        offset_store=MemoryOffsetStore(),
        topics=MemoryTopics(),
        status_store=MemoryStatusStore(),
        membership=member,
    )
    starting = asyncio.get_running_loop().create_task(engine.start())
    await started.wait()
    seat = members[0]
    worker = seat.join_metadata().worker_id
    url = "http://w1:8083"
    empty = Assignment(worker, url, 0, Work(), urls={worker: url})
    seat.on_assignment(empty, 1)
    await starting
    cluster = engine.cluster
    assert cluster is not None
    feed = engine.transitions()
    everything = Work(frozenset(names), frozenset((c, t) for c in names for t in range(TASKS)))
    end = len(names) * (TASKS + 2)
    try:

        async def applied(assignment: Assignment, generation: int, running: int) -> float:
            """Until the assignment is applied and ``running`` units more (or fewer) run; read off the
            transition feed, not ``Engine.settled``, whose check over every unit would stall the loop."""
            before = cluster.rebalances_applied
            began = time.perf_counter()
            seat.on_assignment(assignment, generation)
            moved = 0
            while cluster.rebalances_applied == before or moved != running:
                await asyncio.sleep(0.005)
                for event in feed.drain():
                    moved += (event.to_state == "RUNNING") - (event.from_state == "RUNNING")
            return time.perf_counter() - began

        if profile is not None:
            profile.enable()
        with LoopLag() as lag:
            assignment = Assignment(worker, url, end, everything, urls={worker: url})
            result.apply_s = await applied(assignment, 2, everything.size)
        result.apply_stall_ms, result.apply_p99_ms = lag.worst_ms, lag.p99_ms
        rewritten = [key for key, _ in log._entries[end:] if key.startswith("task-")]
        assert not rewritten, "the worker rewrote task configs: the bench's differ from its connector's"
        with LoopLag() as lag:  # one new connector's record, read with the whole snapshot present
            offset = await log.append([encode(r) for r in _records([f"new{connectors}"])[:1]])
            await engine.herder.wait_applied(f"new{connectors}", offset)
            await asyncio.sleep(0.05)  # what the record set off (a rebalance asked for) runs meanwhile
        result.record_stall_ms = lag.worst_ms
        with LoopLag() as lag:
            revoke = Assignment(worker, url, offset + 1, Work(), everything, urls={worker: url})
            result.revoke_s = await applied(revoke, 3, -everything.size)
        result.revoke_stall_ms, result.revoke_p99_ms = lag.worst_ms, lag.p99_ms
        if profile is not None:
            profile.disable()
    finally:
        await engine.shutdown()
        FAULTS.release_all()
    return result


# ---- the report -----------------------------------------------------------------------------------


def report(plans: list[tuple[str, int, float]], runs: list[WorkerRun], connectors: int, profile: str) -> str:
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "",
        "## A rebalance round at 10,000 connectors",
        "",
        f"`python bench/rebalance_round.py` (load average before the run {load}, "
        f"{os.cpu_count()} cores). The leader's `planner.plan` for {connectors:,} connectors x {TASKS} "
        "tasks (median of the repeats):",
        "",
        "| round | members | plan (ms) |",
        "|---|---:|---:|",
        *(f"| {case} | {members} | {ms:.1f} |" for case, members, ms in plans),
        "",
        "One embedded worker applying an assignment of every connector and task, reading one more "
        "connector's record, then having it all revoked; the worst stall is the longest the event "
        "loop was held by one callback (a 1 ms sleep's overshoot):",
        "",
        "| connectors | apply (s) | stall applying: worst / p99 (ms) | worst stall on one record (ms) "
        "| revoke (s) | stall revoking: worst / p99 (ms) |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r.connectors:,} | {r.apply_s:.1f} | {r.apply_stall_ms:.1f} / {r.apply_p99_ms:.1f} "
            f"| {r.record_stall_ms:.1f} | {r.revoke_s:.1f} | {r.revoke_stall_ms:.1f} / {r.revoke_p99_ms:.1f} |"
            for r in runs
        ),
        "",
    ]
    if profile:
        lines += [
            "The top of the profile of one more round of the largest worker (apply, one record, revoke):",
            "",
            "```",
            profile.rstrip(),
            "```",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connectors", type=int, default=10_000)
    parser.add_argument("--worker-sizes", type=int, nargs="*", default=[3_000, 10_000])
    parser.add_argument("--members", type=int, nargs="*", default=[3, 10, 50])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="profile one more round of the largest worker")
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    # logged at INFO as a worker logs (the cost is part of a round), written nowhere
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(open(os.devnull, "w")))  # noqa: SIM115
    plans = time_plans(args.connectors, args.members, args.repeat)
    for case, members, ms in plans:
        print(f"plan {case:<28} {members:>3} members {ms:8.1f} ms", flush=True)
    runs = []
    for size in args.worker_sizes:
        run = asyncio.run(worker_round(size))
        print(run, flush=True)
        runs.append(run)
    profiled = ""
    if args.profile and args.worker_sizes:  # a round of its own: the profiler would inflate the stalls above
        profile = cProfile.Profile()
        asyncio.run(worker_round(max(args.worker_sizes), profile))
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(15)
        profiled = out.getvalue()
    text = report(plans, runs, args.connectors, profiled)
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
