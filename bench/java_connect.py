"""Java Kafka Connect vs ours on one Apache Kafka 4.1 broker (KRaft, Maven jars), same REST calls to both.

Three parts, each its own BENCHMARKS.md section (``--part``):

* ``data``: FileStreamSource -> topic -> FileStreamSink, a file of N 100-byte lines in, N lines out,
  one task each way, standalone workers; Connect's and our FileStream connectors are twins. Clock:
  POST of the source connector (the sink already owns its partition) -> the output file holding every
  line. Baseline, same run: raw aiokafka reading the same file, producing each line, a group consumer
  writing each value to a file. StringConverter (Java's ByteArrayConverter refuses FileStream's STRING
  schema) and JsonConverter ``schemas.enable=false``.
* ``rest``: create 1,000 connectors over REST and delete them, one distributed worker each;
  FileStreamSource on an empty file, ``tasks.max=1``. Time to all created and RUNNING (connector
  and task), time to all deleted (``GET /connectors`` empty).
* ``cluster``: create -> RUNNING latency via REST on a 3-worker cluster, then a 4th worker joining a
  cluster holding N such connectors: its process start -> every connector and task RUNNING with the
  4th holding its share.

Java Connect and the broker run on :data:`bench.runtimes.BENCH_JVM` (a normal JIT JVM). Median of 3
where a part repeats. The machine is shared: the load average is recorded with each section.

    python bench/java_connect.py --part data|rest|cluster [--lines N] [--connectors N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import logging
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402

from bench.report import append_to  # noqa: E402
from bench.runtimes import (  # noqa: E402
    BENCH_JVM,
    BENCH_JVM_TEXT,
    GROUP_SETTINGS,
    RUNTIMES,
    Worker,
    all_running,
    cluster_names,
    start_engine,
    start_worker,
    statuses,
    workers,
)
from engine.testing.kafka import apache_kafka  # noqa: E402

REPEATS = 3
SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {
    "string": {"key.converter": STRING, "value.converter": STRING},
    "json": {
        "key.converter": JSON,
        "key.converter.schemas.enable": "false",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
    },
    # JsonConverter as users run it: schemas.enable=true is its default (the schema envelope per record)
    "json-schemas": {"key.converter": JSON, "value.converter": JSON},
}
_STRING_SCHEMA = {
    "type": "string",
    "optional": False,
}  # FileStreamSource's value schema, as Connect writes it
# Both FileStreamSinks write each put through; commits every 100 ms on both all the same, so the
# offsets settle soon after the last line.
FLUSH = {"offset.flush.interval.ms": "100"}
LABEL = {"java": "Java Connect", "engine": "connect-engine", "aiokafka": "raw aiokafka"}


def _progress(text: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {text}\n")
    sys.stderr.flush()


def _header(title: str, command: str, load_start: float, extra: str) -> list[str]:
    load_end = os.getloadavg()[0]
    return [
        f"## {title}",
        "",
        f"Command: `{command}` ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, run {time.strftime('%Y-%m-%d')}; Apache Kafka 4.1, one "
        f"KRaft node; Java Connect 4.1 and the broker on {BENCH_JVM_TEXT}). "
        + (
            "**Taken under load**: the machine is shared with other work, "
            if max(load_start, load_end) > (os.cpu_count() or 1)
            else "Taken on a quiet machine: "
        )
        + f"1-min load average {load_start:.1f} at the start and {load_end:.1f} at the end; the ratios are same-run.",
        "",
        extra,
        "",
    ]


async def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()


async def _group_assigned(bootstrap: str, group: str) -> bool:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    for response in described:
        for entry in response.to_object().get("groups", []):
            if entry.get("state") == "Stable" and entry.get("members"):
                return True
    return False


# ---- part 1: data plane ----------------------------------------------------------------------


def _write_lines(path: Path, n: int) -> int:
    with path.open("wb") as out:
        for i in range(n):
            out.write((b"%010d" % i) * 10 + b"\n")  # 100-byte line + newline
    return path.stat().st_size


async def _wait_size(path: Path, size: int, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            if path.stat().st_size >= size:  # noqa: ASYNC240 - a stat is cheap and has no async form
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not reach {size} bytes")
        await asyncio.sleep(0.005)


async def _pipeline_once(
    worker: Worker, bootstrap: str, source_file: Path, size: int, kind: str, directory: Path
) -> float:
    tag = uuid.uuid4().hex[:8]
    topic, out = f"lines-{tag}", directory / f"out-{tag}.txt"
    await _create_topic(bootstrap, topic)
    conv = CONVERTERS[kind]
    sink, source = f"sink-{tag}", f"source-{tag}"
    answer = worker.call(
        "POST",
        "/connectors",
        {
            "name": sink,
            "config": {"connector.class": SINK, "tasks.max": "1", "topics": topic, "file": str(out), **conv},
        },
    )
    assert answer.status == 201, answer.text
    deadline = time.monotonic() + 120
    while not (all_running(statuses(worker), {sink}) and await _group_assigned(bootstrap, f"connect-{sink}")):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{worker.runtime}: sink {sink} never owned its partition")
        await asyncio.sleep(0.1)
    began = time.perf_counter()
    answer = worker.call(
        "POST",
        "/connectors",
        {
            "name": source,
            "config": {
                "connector.class": SOURCE,
                "tasks.max": "1",
                "topic": topic,
                "file": str(source_file),
                **conv,
            },
        },
    )
    assert answer.status == 201, answer.text
    await _wait_size(out, size)
    elapsed = time.perf_counter() - began
    for name in (source, sink):
        worker.call("DELETE", f"/connectors/{name}")
    with contextlib.suppress(OSError):
        out.unlink()
    return elapsed


async def _aiokafka_once(bootstrap: str, source_file: Path, size: int, kind: str, directory: Path) -> float:
    """Raw aiokafka: read the file's lines, send each (orjson-encoded for JSON), flush; a joined group
    consumer writes each value (decoded for JSON) as a line to the output file."""
    tag = uuid.uuid4().hex[:8]
    topic, out = f"base-{tag}", directory / f"base-{tag}.txt"
    await _create_topic(bootstrap, topic)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"g-{tag}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
    )
    json_, envelope = kind.startswith("json"), kind == "json-schemas"
    await producer.start()
    await consumer.start()
    try:
        await producer.partitions_for(topic)
        while not consumer.assignment():
            await consumer.getmany(timeout_ms=100)
        began = time.perf_counter()

        async def read() -> None:
            written = 0
            with out.open("wb") as sink:
                while written < size:
                    got = await consumer.getmany(timeout_ms=100, max_records=2000)
                    for records in got.values():
                        for record in records:
                            value: bytes = record.value
                            if json_:
                                decoded: Any = orjson.loads(record.value)
                                value = (decoded["payload"] if envelope else decoded).encode()
                            sink.write(value + b"\n")
                            written += len(value) + 1
                    sink.flush()

        reader = asyncio.ensure_future(read())
        with source_file.open("rb") as lines:
            for line in lines:
                value = line.rstrip(b"\n")
                text = value.decode()
                body = {"schema": _STRING_SCHEMA, "payload": text} if envelope else text
                await producer.send(topic, orjson.dumps(body) if json_ else value)
        await producer.flush()
        await asyncio.wait_for(reader, 300)
        return time.perf_counter() - began
    finally:
        await consumer.stop()
        await producer.stop()
        with contextlib.suppress(OSError):
            out.unlink()


async def part_data(
    lines: int, profile: bool, task_processes: int = 0
) -> tuple[list[dict[str, Any]], str | None]:
    rows: list[dict[str, Any]] = []
    profile_text = None
    with (
        apache_kafka("4.1", jvm_options=BENCH_JVM) as kafka,
        tempfile.TemporaryDirectory() as tmp,
        workers() as started,
    ):
        directory = Path(tmp)
        bootstrap = kafka.bootstrap_servers()
        source_file = directory / "lines.txt"
        size = _write_lines(source_file, lines)
        java = start_worker("java", "standalone", bootstrap, directory, FLUSH)
        started.append(java)
        # task.processes=N (ours only): the source and sink tasks in child processes, off the worker's core
        ours_props = {**FLUSH, "task.processes": str(task_processes)} if task_processes else FLUSH
        ours = start_worker("engine", "standalone", bootstrap, directory, ours_props)
        started.append(ours)
        for kind in CONVERTERS:
            runs: dict[str, list[float]] = {"java": [], "engine": [], "aiokafka": []}
            await _pipeline_once(
                java, bootstrap, source_file, size, kind, directory
            )  # warm-up (JIT), not counted
            await _pipeline_once(ours, bootstrap, source_file, size, kind, directory)
            for _ in range(REPEATS):
                runs["aiokafka"].append(await _aiokafka_once(bootstrap, source_file, size, kind, directory))
                runs["java"].append(await _pipeline_once(java, bootstrap, source_file, size, kind, directory))
                runs["engine"].append(
                    await _pipeline_once(ours, bootstrap, source_file, size, kind, directory)
                )
            row = {"kind": kind, "runs": runs, **{k: lines / statistics.median(v) for k, v in runs.items()}}
            rows.append(row)
            _progress(f"data {kind}: " + ", ".join(f"{k} {row[k]:,.0f} lines/s" for k in runs))
        if profile:
            profile_text = await _profile_engine_pipeline(bootstrap, source_file, size, directory)
    return rows, profile_text


async def _profile_engine_pipeline(bootstrap: str, source_file: Path, size: int, directory: Path) -> str:
    """The same file pipeline in process (Engine on Kafka topics) under cProfile: where our time goes."""
    from engine import Engine

    async def once() -> None:
        tag = uuid.uuid4().hex[:8]
        topic, out = f"prof-{tag}", directory / f"prof-{tag}.txt"
        async with Engine(
            {
                "bootstrap.servers": bootstrap,
                "config.storage.topic": f"pcfg-{tag}",
                "offset.storage.file.filename": str(directory / f"poff-{tag}"),
                **FLUSH,
            }
        ) as engine:
            await engine.topics.create_topic(topic, 1)
            conv = CONVERTERS["string"]
            await engine.create_connector(
                f"sink-{tag}", {"connector.class": SINK, "topics": topic, "file": str(out), **conv}
            )
            await asyncio.sleep(3)
            profiler = cProfile.Profile()
            profiler.enable()
            await engine.create_connector(
                f"source-{tag}", {"connector.class": SOURCE, "topic": topic, "file": str(source_file), **conv}
            )
            while not out.exists() or out.stat().st_size < size:  # noqa: ASYNC110 - a file has no event
                await asyncio.sleep(0.01)
            profiler.disable()
            stream = io.StringIO()
            pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(15)
            holder.append(stream.getvalue())

    holder: list[str] = []
    await once()
    return _trim_profile(holder[0] if holder else "")


def _trim_profile(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    keep = [line for line in lines if line.strip()]
    start = next((i for i, line in enumerate(keep) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(
        line.replace(str(ROOT) + "/", "").replace(sys.prefix, "<venv>") for line in keep[max(0, start - 1) :]
    )


def markdown_data(
    rows: list[dict[str, Any]], lines: int, command: str, load: float, profile: str | None
) -> str:
    out = _header(
        "Apache Kafka: FileStream pipeline, Java Connect vs connect-engine vs raw aiokafka",
        command,
        load,
        f"A file of {lines:,} lines of 100 bytes -> FileStreamSource (1 task) -> a 1-partition topic -> "
        "FileStreamSink (1 task) -> a file, on a standalone worker of each runtime (separate processes, "
        "REST), both with `offset.flush.interval.ms=100` (both FileStreamSinks write each put through); "
        "ours with `task.processes` as the command gives it (0, the default: tasks in the worker's process). Clock: the source connector's POST -> the output file holding every line (polled every 5 ms); "
        "the sink task already owns its partition. Raw aiokafka (same run): read the file, `send` each line "
        "(`acks=all`), flush; a joined group consumer writes each value as a line. `string` = "
        "StringConverter (Java's ByteArrayConverter refuses FileStream's STRING schema); `json` = "
        "JsonConverter `schemas.enable=false` (the baseline encodes/decodes each line with orjson); "
        "`json-schemas` = JsonConverter with its default `schemas.enable=true` (the baseline wraps each line "
        "in the same schema envelope with orjson). "
        f"One untimed warm-up pipeline per runtime and converter (the JIT), then median of {REPEATS}, "
        "runtimes alternating.",
    )
    out += [
        "| converter | raw aiokafka lines/s | Java Connect lines/s | connect-engine lines/s | "
        "engine / Java | engine / aiokafka | Java / aiokafka |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['kind']} | {r['aiokafka']:,.0f} | {r['java']:,.0f} | {r['engine']:,.0f} | "
            f"{r['engine'] / r['java']:.2f} | {r['engine'] / r['aiokafka']:.2f} | "
            f"{r['java'] / r['aiokafka']:.2f} |"
        )
    out += ["", "Runs (seconds):", ""]
    for r in rows:
        out.append(
            f"- {r['kind']}: "
            + "; ".join(f"{LABEL[k]} " + ", ".join(f"{s:.2f}" for s in v) for k, v in r["runs"].items())
        )
    out += [
        "",
        "What limits it: ours is one Python process whose event loop does the source's line "
        "splitting, conversion and the producer's batching, then the consumer, conversion and file "
        "writes of the sink, all on one core (the FileStream tasks are synchronous and hop to "
        "threads for each poll/put); Java runs the two tasks on their own threads with a JIT-compiled "
        "client, so it uses both cores.",
    ]
    if profile:
        out += [
            "",
            "Top of a cProfile of ours (the same pipeline in process, StringConverter, sorted by own time):",
            "",
            "```",
            profile,
            "```",
        ]
    return "\n".join(out) + "\n"


# ---- part 2: 1,000 connectors over REST -------------------------------------------------------


def _noop_config(topic: str, empty: Path) -> dict[str, str]:
    return {
        "connector.class": SOURCE,
        "tasks.max": "1",
        "topic": topic,
        "file": str(empty),
        **CONVERTERS["string"],
    }


def _create_all(worker: Worker, names: list[str], config: dict[str, str]) -> float:
    began = time.perf_counter()
    for name in names:
        answer = worker.call("POST", "/connectors", {"name": name, "config": config})
        assert answer.status == 201, (worker.runtime, answer.status, answer.text)
    return time.perf_counter() - began


def _wait_running(worker: Worker, names: set[str], timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not all_running(statuses(worker), names):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{worker.runtime}: not all {len(names)} connectors RUNNING")
        time.sleep(0.5)


def _top_of(pstats_file: Path, lines: int = 15) -> str:
    stream = io.StringIO()
    pstats.Stats(str(pstats_file), stream=stream).sort_stats("tottime").print_stats(lines)
    return _trim_profile(stream.getvalue())


def _profile_rest(bootstrap: str, directory: Path, connectors: int, empty: Path) -> str:
    """Ours again, under pyinstrument, creating and deleting ``connectors``: where its time goes."""
    group, topics = cluster_names("profiled")
    target = directory / "rest.pstats"
    worker = start_engine(
        "distributed", bootstrap, directory, {**GROUP_SETTINGS, "group.id": group, **topics}, profile=target
    )
    try:
        names = [f"p-{i:05d}" for i in range(connectors)]
        _create_all(worker, names, _noop_config("noop-profiled", empty))
        _wait_running(worker, set(names))
        for name in names:
            worker.call("DELETE", f"/connectors/{name}")
        while worker.call("GET", "/connectors").json:
            time.sleep(0.2)
    finally:
        worker.stop()
    return _top_of(target)


def part_rest(connectors: int, profile: int) -> tuple[list[dict[str, Any]], str | None]:
    rows = []
    profile_text = None
    with apache_kafka("4.1", jvm_options=BENCH_JVM) as kafka, tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        bootstrap = kafka.bootstrap_servers()
        empty = directory / "empty.txt"
        empty.touch()
        for runtime in RUNTIMES:
            with workers() as started:
                group, topics = cluster_names(runtime)
                worker = start_worker(
                    runtime,
                    "distributed",
                    bootstrap,
                    directory,
                    GROUP_SETTINGS,
                    group_id=group,
                    topics=topics,
                )
                started.append(worker)
                names = [f"c-{i:05d}" for i in range(connectors)]
                config = _noop_config(f"noop-{runtime}", empty)
                began = time.perf_counter()
                posted = _create_all(worker, names, config)
                _wait_running(worker, set(names))
                running = time.perf_counter() - began
                began = time.perf_counter()
                for name in names:
                    answer = worker.call("DELETE", f"/connectors/{name}")
                    assert answer.status == 204, (runtime, answer.status, answer.text)
                deletes = time.perf_counter() - began
                deadline = time.monotonic() + 600
                while worker.call("GET", "/connectors").json:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{runtime}: connectors left after deleting")
                    time.sleep(0.2)
                deleted = time.perf_counter() - began
                rows.append(
                    {
                        "runtime": runtime,
                        "posted": posted,
                        "running": running,
                        "deletes": deletes,
                        "deleted": deleted,
                    }
                )
                _progress(f"rest {runtime}: {rows[-1]}")
        if profile:
            profile_text = _profile_rest(bootstrap, directory, profile, empty)
    return rows, profile_text


def markdown_rest(
    rows: list[dict[str, Any]], connectors: int, command: str, load: float, profile: str | None, profiled: int
) -> str:
    by = {r["runtime"]: r for r in rows}
    out = _header(
        f"Apache Kafka: create and delete {connectors:,} connectors over REST, Java Connect vs connect-engine",
        command,
        load,
        f"One distributed worker of each runtime (its own group and internal topics) on the same broker; "
        f"{connectors:,} `FileStreamSourceConnector`s on an empty file, `tasks.max=1` (the same class on both "
        "sides), created one POST after another from one client, then deleted the same way. Created = first POST "
        "-> `GET /connectors?expand=status` shows every connector and task RUNNING (polled every 0.5 s); "
        f"deleted = first DELETE -> `GET /connectors` empty. One run each (a run is the whole {connectors:,}).",
    )
    out += ["| measure | Java Connect | connect-engine | engine / Java (time) |", "|---|---|---|---|"]
    for key, label in (
        ("posted", "all POSTs answered 201"),
        ("running", "all created and RUNNING"),
        ("deletes", "all DELETEs answered 204"),
        ("deleted", "all deleted"),
    ):
        java, ours = by["java"][key], by["engine"][key]
        out.append(f"| {label} | {java:.1f} s | {ours:.1f} s | {ours / java:.2f} |")
    out += [
        "",
        "What limits it: each POST and DELETE is a write to the config topic read back before it "
        "answers (both runtimes), then a rebalance round to assign the new work (Java's herder thread "
        "serialises REST requests behind the rebalances: at 300 connectors and more its deletes slow to about "
        "0.6 s each). Ours: the FileStream connectors are synchronous; their tasks' `poll()` calls run on "
        "the engine's task threads (`task.threads.max`, 128) and every other call (`start()`, "
        "`task_configs()`, `stop()`) on the event loop's default executor of min(32, cores + 4) = "
        f"{min(32, (os.cpu_count() or 1) + 4)} threads here, so idle sources sleeping 0.1 s per poll no "
        "longer make connector calls wait their turn (before that split, 100 connectors took 81 s to create "
        "and 99 s to delete on this machine, 8x Java's time).",
    ]
    if profile:
        out += [
            "",
            f"Top of a profile of ours (the event loop's thread; a separate run of {profiled:,} connectors created and deleted on a "
            "worker under pyinstrument, sampling; pstats sorted by own time):",
            "",
            "```",
            profile,
            "```",
        ]
    return "\n".join(out) + "\n"


# ---- part 3: a 3-worker cluster --------------------------------------------------------------


def _create_latency(worker: Worker, name: str, config: dict[str, str]) -> float:
    began = time.perf_counter()
    answer = worker.call("POST", "/connectors", {"name": name, "config": config})
    assert answer.status == 201, answer.text
    while True:
        status = worker.call("GET", f"/connectors/{name}/status")
        if status.status == 200 and all_running({name: status.json}, {name}):
            return time.perf_counter() - began
        time.sleep(0.01)


def part_cluster(connectors: int, samples: int) -> list[dict[str, Any]]:
    rows = []
    with apache_kafka("4.1", jvm_options=BENCH_JVM) as kafka, tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        bootstrap = kafka.bootstrap_servers()
        empty = directory / "empty.txt"
        empty.touch()
        for runtime in RUNTIMES:
            with workers() as started:
                group, topics = cluster_names(runtime)
                for _ in range(3):
                    started.append(
                        start_worker(
                            runtime,
                            "distributed",
                            bootstrap,
                            directory,
                            GROUP_SETTINGS,
                            group_id=group,
                            topics=topics,
                        )
                    )
                first = started[0]
                config = _noop_config(f"noop-{runtime}", empty)
                latencies = [_create_latency(first, f"lat-{i:03d}", config) for i in range(samples)]
                _progress(
                    f"cluster {runtime}: create->RUNNING p50 {statistics.median(latencies) * 1000:.0f} ms"
                )
                names = [f"c-{i:05d}" for i in range(connectors - samples)]
                _create_all(first, names, config)
                everything = {*names, *(f"lat-{i:03d}" for i in range(samples))}
                _wait_running(first, everything)
                time.sleep(2)
                units = 2 * len(everything)
                began = time.perf_counter()
                fourth = start_worker(
                    runtime,
                    "distributed",
                    bootstrap,
                    directory,
                    GROUP_SETTINGS,
                    group_id=group,
                    topics=topics,
                )
                started.append(fourth)
                ready = time.perf_counter() - began
                fourth_id = fourth.url.removeprefix("http://")
                deadline = time.monotonic() + 600
                while True:
                    status = statuses(first)
                    if all_running(status, everything):
                        held = sum(
                            (s["connector"]["worker_id"] == fourth_id)
                            + sum(t["worker_id"] == fourth_id for t in s["tasks"])
                            for s in status.values()
                        )
                        if held >= units // 4 - 2:
                            break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{runtime}: the 4th worker never got its share")
                    time.sleep(0.2)
                joined = time.perf_counter() - began
                rows.append(
                    {
                        "runtime": runtime,
                        "latencies": latencies,
                        "ready": ready,
                        "joined": joined,
                        "held": held,
                        "units": units,
                    }
                )
                _progress(f"cluster {runtime}: 4th worker ready {ready:.1f} s, balanced {joined:.1f} s")
    return rows


def markdown_cluster(
    rows: list[dict[str, Any]], connectors: int, samples: int, command: str, load: float
) -> str:
    by = {r["runtime"]: r for r in rows}

    def p(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]

    out = _header(
        "Apache Kafka: a 3-worker cluster, Java Connect vs connect-engine",
        command,
        load,
        "Three distributed workers of each runtime (separate processes, one group and its internal topics per "
        "runtime) on the same broker, both with "
        + ", ".join(f"`{k}={v}`" for k, v in GROUP_SETTINGS.items())
        + f". Connectors: `FileStreamSourceConnector` on an empty file, `tasks.max=1`. create -> RUNNING: "
        f"{samples} POSTs on the first worker, one at a time, each until its `/status` shows the connector and "
        f"its task RUNNING (polled every 10 ms). Join: with {connectors:,} connectors ({2 * connectors:,} "
        "connectors + tasks) RUNNING on 3 workers, a 4th worker's process starts; clock to every connector "
        "and task RUNNING with the 4th holding at least a quarter (less 2) of them, read from "
        "`GET /connectors?expand=status` on the first worker every 0.2 s.",
    )
    out += ["| measure | Java Connect | connect-engine | engine / Java |", "|---|---|---|---|"]
    jl, el = by["java"]["latencies"], by["engine"]["latencies"]
    out.append(
        f"| create -> RUNNING p50 | {statistics.median(jl) * 1000:.0f} ms | "
        f"{statistics.median(el) * 1000:.0f} ms | {statistics.median(el) / statistics.median(jl):.2f} |"
    )
    out.append(
        f"| create -> RUNNING p90 | {p(jl, 0.9) * 1000:.0f} ms | {p(el, 0.9) * 1000:.0f} ms | "
        f"{p(el, 0.9) / p(jl, 0.9):.2f} |"
    )
    out.append(
        f"| 4th worker: process start -> REST answers | {by['java']['ready']:.1f} s | "
        f"{by['engine']['ready']:.1f} s | {by['engine']['ready'] / by['java']['ready']:.2f} |"
    )
    out.append(
        f"| 4th worker: process start -> its share RUNNING ({connectors:,} connectors) | "
        f"{by['java']['joined']:.1f} s | {by['engine']['joined']:.1f} s | "
        f"{by['engine']['joined'] / by['java']['joined']:.2f} |"
    )
    out += [
        "",
        f"Units the 4th worker held at the end: Java {by['java']['held']} of {by['java']['units']}, "
        f"ours {by['engine']['held']} of {by['engine']['units']}.",
        "",
        "What limits it: create -> RUNNING is two rebalance rounds in both runtimes (the connector is "
        "assigned in one, the task configs it writes in the next), so it is bound by the group "
        "protocol's round trips; the join adds reading the config topic and starting the moved tasks. "
        "Every worker of ours, as each of Java's, requests the rejoin as soon as it reads a record "
        "that changes the work (`Cluster.work_changed` in engine/distributed/cluster.py); until "
        "2026-11-27 only our leader did, the followers learned of each round from a heartbeat answer "
        "(REBALANCE_IN_PROGRESS), and our p50 was about 2 x `heartbeat.interval.ms` (2,026 ms against "
        "Java's 219 ms on this machine). Not profiled: the time is waiting, not CPU.",
    ]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("data", "rest", "cluster"), required=True)
    parser.add_argument("--lines", type=int, default=100_000, help="lines in the file (data)")
    parser.add_argument("--connectors", type=int, default=1000, help="connectors (rest, cluster)")
    parser.add_argument("--samples", type=int, default=20, help="create -> RUNNING samples (cluster)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profile of ours (data, rest)")
    parser.add_argument(
        "--profile-connectors", type=int, default=300, help="rest: connectors in the profiled run"
    )
    parser.add_argument(
        "--task-processes",
        type=int,
        default=0,
        help="data: our worker's task.processes (0: as users default)",
    )
    parser.add_argument("--append", metavar="FILE", help="append the markdown section to FILE")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    from engine.observability.logs import configure_logging

    configure_logging("ERROR")
    load = os.getloadavg()[0]
    command = ("python bench/java_connect.py " + " ".join(sys.argv[1:])).strip()
    if args.part == "data":
        rows, profile = asyncio.run(part_data(args.lines, not args.no_profile, args.task_processes))
        report = markdown_data(rows, args.lines, command, load, profile)
    elif args.part == "rest":
        rows, profile = part_rest(args.connectors, 0 if args.no_profile else args.profile_connectors)
        report = markdown_rest(rows, args.connectors, command, load, profile, args.profile_connectors)
    else:
        report = markdown_cluster(
            part_cluster(args.connectors, args.samples), args.connectors, args.samples, command, load
        )
    print(report)
    append_to(args.append, "\n" + report)


if __name__ == "__main__":
    main()
