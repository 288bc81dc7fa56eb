"""Task processes on Apache Kafka (``task.processes``): tasks run in task hosts, their lifecycle stays
in the worker, and a host that dies fails only the tasks it ran."""

from __future__ import annotations

import os
import re
import signal
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engine import Engine
from engine.config.kafka_clients.accounting import live_clients
from engine.testing.waiting import eventually
from engine.worker.task_host.process_runner import ProcessTaskRunner
from tests.integration.brokers import Broker
from tests.integration.test_exactly_once import STRINGS, committed_values
from tests.observability.test_metrics import Samples, parse
from tests.observability.test_plugin_metrics import CONFIG as PLUGIN_METRICS_CONFIG
from tests.observability.test_plugin_metrics import plugin
from tests.worker.task_host.connectors import MARKER, TRIGGER, sink_lines

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

MODULE = "tests.worker.task_host.connectors"


def _worker(kafka: Broker, **extra: str) -> dict[str, str]:
    return {
        "bootstrap.servers": kafka.bootstrap,
        "config.storage.topic": f"cfg-{uuid.uuid4().hex[:10]}",
        "offset.flush.interval.ms": "200",
        "task.shutdown.graceful.timeout.ms": "3000",
        "task.processes": "2",
        **extra,
    }


def _pipeline(tmp_path: Path, tag: str, tasks: int = 2) -> tuple[Path, Path, dict[str, str], dict[str, str]]:
    """A FileStream source into a two-partition topic, and the marking FileStream sink reading it."""
    source_file, sink_prefix = tmp_path / f"{tag}-in.txt", tmp_path / f"{tag}-out"
    source_file.touch()
    topic = f"lines-{tag}-{uuid.uuid4().hex[:8]}"
    source = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "file": str(source_file),
        "topic": topic,
        "topic.creation.default.partitions": "2",
        "topic.creation.default.replication.factor": "1",
    }
    sink = {
        "connector.class": f"{MODULE}.MarkingSinkConnector",
        "tasks.max": str(tasks),
        "topics": topic,
        "file": str(sink_prefix),
        MARKER: str(tmp_path / f"{tag}-deleted.txt"),
        "consumer.auto.offset.reset": "earliest",
    }
    return source_file, sink_prefix, source, sink


def _append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)


async def _delivered(prefix: Path, expected: list[str]) -> None:
    want = sorted(expected)
    await eventually(
        lambda: sorted(sink_lines(prefix)) == want or None,
        timeout=60,
        interval=0.2,
        message=f"every line reached the sink ({len(want)})",
    )


def _runner(engine: Engine, name: str, task: int) -> Any:
    slot = engine.herder._actors[name].tasks[task]
    return slot.runner


def _host_pid(engine: Engine, name: str, task: int) -> int:
    runner = _runner(engine, name, task)
    assert isinstance(runner, ProcessTaskRunner)
    pid = runner.host_pid
    assert pid is not None
    assert pid != os.getpid()
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_file_pipeline_runs_in_task_hosts_through_pause_restart_and_delete(
    kafka: Broker, tmp_path: Path
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "p")
    lines = [f"line-{i}" for i in range(2000)]
    async with Engine(_worker(kafka)) as engine:
        await engine.create_connector("src", source)
        await engine.create_connector("sink", sink)
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        await engine.wait_for_state("sink", "RUNNING", tasks=2)
        hosts = {_host_pid(engine, "src", 0), _host_pid(engine, "sink", 0), _host_pid(engine, "sink", 1)}
        assert len(hosts) == 2  # three tasks on at most two hosts
        _append(source_file, lines[:1000])
        await _delivered(sink_prefix, lines[:1000])

        await engine.pause_connector("sink")
        await engine.wait_for_state("sink", "PAUSED", tasks=2)
        _append(source_file, lines[1000:1500])
        await engine.resume_connector("sink")
        await engine.wait_for_state("sink", "RUNNING", tasks=2)
        await _delivered(sink_prefix, lines[:1500])

        before = _runner(engine, "src", 0)
        await engine.restart_connector("src", include_tasks=True)
        await engine.wait_for_state("src", "RUNNING", tasks=1)
        assert _runner(engine, "src", 0) is not before
        _host_pid(engine, "src", 0)
        _append(source_file, lines[1500:])
        await _delivered(sink_prefix, lines)  # the restarted source resumed from its committed offsets

        sink_pids = {_host_pid(engine, "sink", 0), _host_pid(engine, "sink", 1)}
        outcome = await engine.delete_connector("sink")
        assert outcome.succeeded
        marks = (tmp_path / "p-deleted.txt").read_text().splitlines()
        assert sorted(marks) == sorted(f"deleted {pid}" for pid in sink_pids)  # once per task, in its host
        assert f"deleted {os.getpid()}" not in marks


async def test_a_crashing_or_stuck_task_fails_alone_while_the_worker_and_others_run_on(
    kafka: Broker, tmp_path: Path
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "c", tasks=1)
    triggers = {kind: tmp_path / f"{kind}.trigger" for kind in ("segv", "exit", "stuck")}
    bad = {
        "segv": f"{MODULE}.SegfaultConnector",
        "exit": f"{MODULE}.ExitConnector",
        "stuck": f"{MODULE}.StopIgnoringConnector",
    }
    # a host per task: each bad task alone on its own
    async with Engine(_worker(kafka, **{"task.processes": "5"})) as engine:
        await engine.create_connector("src", source)
        await engine.create_connector("sink", sink)
        for kind, cls in bad.items():
            await engine.create_connector(kind, {"connector.class": cls, TRIGGER: str(triggers[kind])})
        for name in ("src", "sink", *bad):
            await engine.wait_for_state(name, "RUNNING", tasks=1)
        _append(source_file, [f"a-{i}" for i in range(500)])
        await _delivered(sink_prefix, [f"a-{i}" for i in range(500)])

        segv_pid = _host_pid(engine, "segv", 0)
        for kind in ("segv", "exit", "stuck"):
            triggers[kind].touch()
        status = await engine.wait_for_state("segv", "RUNNING", tasks=["FAILED"])
        assert status is not None
        assert "Task process exited with signal SIGSEGV (-11)" in status["tasks"][0]["trace"]
        status = await engine.wait_for_state("exit", "RUNNING", tasks=["FAILED"])
        assert status is not None
        assert "Task process exited with exit code 3" in status["tasks"][0]["trace"]

        # the stuck task's stop() never returns: past the graceful timeout its host is killed
        stuck_pid = _host_pid(engine, "stuck", 0)
        outcome = await engine.delete_connector("stuck")
        assert outcome.succeeded
        await eventually(
            lambda: not _alive(stuck_pid), timeout=30, message="the stuck task's host was killed"
        )

        # the good pipeline kept moving; a restart runs the crashed task on a new host
        _append(source_file, [f"b-{i}" for i in range(500)])
        await _delivered(sink_prefix, [f"{p}-{i}" for p in "ab" for i in range(500)])
        triggers["segv"].unlink()
        await engine.restart_task("segv", 0)
        await engine.wait_for_state("segv", "RUNNING", tasks=1)
        assert _host_pid(engine, "segv", 0) != segv_pid


async def test_a_task_over_the_memory_ceiling_is_killed_and_failed_while_others_run_on(
    kafka: Broker, tmp_path: Path
) -> None:
    source_file, sink_prefix, source, sink = _pipeline(tmp_path, "m", tasks=1)
    trigger = tmp_path / "hog.trigger"
    limit = 268435456  # 256 MiB: a host's own footprint is well under
    worker = _worker(kafka, **{"task.processes": "3", "task.process.memory.max.bytes": str(limit)})
    async with Engine(worker) as engine:
        await engine.create_connector("src", source)
        await engine.create_connector("sink", sink)
        await engine.create_connector(
            "hog", {"connector.class": f"{MODULE}.MemoryHogConnector", TRIGGER: str(trigger)}
        )
        for name in ("src", "sink", "hog"):
            await engine.wait_for_state(name, "RUNNING", tasks=1)
        _append(source_file, [f"a-{i}" for i in range(300)])
        await _delivered(sink_prefix, [f"a-{i}" for i in range(300)])
        hog_pid = _host_pid(engine, "hog", 0)

        trigger.touch()  # the hog now keeps 32 MiB more at each poll
        status = await engine.wait_for_state("hog", "RUNNING", tasks=["FAILED"])
        assert status is not None
        trace = status["tasks"][0]["trace"]
        match = re.search(
            r"Task process exceeded task\.process\.memory\.max\.bytes=268435456 \(RSS (\d+) bytes\); killed",
            trace,
        )
        assert match is not None, trace
        assert int(match.group(1)) > limit
        assert not _alive(hog_pid)

        _append(source_file, [f"b-{i}" for i in range(300)])
        await _delivered(sink_prefix, [f"{p}-{i}" for p in "ab" for i in range(300)])
        status = await engine.wait_for_state("src", "RUNNING", tasks=1)
        assert status is not None


def _client_bytes(samples: Samples, name: str) -> float:
    return sum(value for (metric, _), value in samples.items() if metric == name)


async def test_plugin_and_client_metrics_of_tasks_in_hosts_reach_the_workers_metrics(
    kafka: Broker, tmp_path: Path
) -> None:
    source = {
        **PLUGIN_METRICS_CONFIG,
        "topic.creation.default.partitions": "1",
        "topic.creation.default.replication.factor": "1",
    }
    sink = {
        "connector.class": f"{MODULE}.MarkingSinkConnector",
        "topics": "metered",
        "file": str(tmp_path / "metered-out"),
        "consumer.auto.offset.reset": "earliest",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    async with Engine(_worker(kafka, **{"task.processes": "2"})) as engine:
        await engine.create_connector("m", source)
        await engine.create_connector("sink", sink)
        await engine.wait_for_state("m", "RUNNING", tasks=1)
        await engine.wait_for_state("sink", "RUNNING", tasks=1)
        _host_pid(engine, "m", 0)  # the monitorable task, its SMT and predicate run in a host

        def worker_own_bytes(role: str) -> int:
            """What this process's own clients (the worker's) counted: the hosts' come on top."""
            return sum(s.outgoing_bytes + s.incoming_bytes for s, _ in live_clients() if s.role == role)

        def arrived() -> Samples | None:
            samples = parse(engine.metrics.render())
            seen = plugin(samples, "records_seen_total", connector="m", task="0", transformation="count")
            produced = _client_bytes(samples, "kafka_producer_outgoing_byte_total") > worker_own_bytes(
                "producer"
            )
            consumed = _client_bytes(samples, "kafka_consumer_incoming_byte_total") > worker_own_bytes(
                "consumer"
            )
            return samples if seen == 3 and produced and consumed else None

        samples = await eventually(arrived, timeout=30, interval=0.2, message="the hosts' metrics arrive")
        assert plugin(samples, "started", connector="m") == 1  # the connector's own, in the worker
        assert (plugin(samples, "poll_count_total", connector="m", task="0", kind="poll") or 0) >= 3
        assert plugin(samples, "value_chars_total", connector="m", task="0", transformation="count") == 24
        assert (plugin(samples, "tests_total", connector="m", task="0", predicate="yes") or 0) >= 3

        assert (await engine.delete_connector("m")).succeeded

        def gone() -> bool:
            samples = parse(engine.metrics.render())
            return not [name for name, labels in samples if name.startswith("kafka_connect_plugins_")]

        await eventually(gone, timeout=10, interval=0.2, message="the deleted task's plugin metrics go")


async def test_a_sink_task_in_a_host_sends_what_it_cannot_convert_to_the_dead_letter_queue(
    kafka: Broker, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    topic, dlq = f"json-{suffix}", f"dlq-{suffix}"
    sink_prefix = tmp_path / "dlq-out"
    values = [b'{"n": 1}', b"not json", b'{"n": 2}', b"{broken", b'{"n": 3}']
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()
    sink = {
        "connector.class": f"{MODULE}.MarkingSinkConnector",
        "topics": topic,
        "file": str(sink_prefix),
        "consumer.auto.offset.reset": "earliest",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    async with Engine(_worker(kafka)) as engine:
        await engine.create_connector("dlq-sink", sink)
        await engine.wait_for_state("dlq-sink", "RUNNING", tasks=1)
        host = _host_pid(engine, "dlq-sink", 0)
        await _delivered(sink_prefix, ["{'n': 1}", "{'n': 2}", "{'n': 3}"])
        consumer = AIOKafkaConsumer(dlq, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            dead: list[Any] = []
            while len(dead) < 2:
                batch = await consumer.getmany(timeout_ms=2000)
                dead.extend(m for messages in batch.values() for m in messages)
        finally:
            await consumer.stop()

        def counted() -> Samples | None:
            samples = parse(engine.metrics.render())
            labels = frozenset({("connector", "dlq-sink"), ("task", "0")})
            key = ("kafka_connect_task_error_deadletterqueue_produce_requests", labels)
            return samples if samples.get(key) == 2 else None

        samples = await eventually(
            counted, timeout=10, interval=0.2, message="the host's error counters arrive"
        )
        labels = frozenset({("connector", "dlq-sink"), ("task", "0")})
        assert samples[("kafka_connect_task_error_total_records_skipped", labels)] == 2
        assert _host_pid(engine, "dlq-sink", 0) == host
    headers = [{k: v.decode() for k, v in m.headers} for m in dead]
    assert [m.value for m in dead] == [b"not json", b"{broken"]
    assert [h["__connect.errors.offset"] for h in headers] == ["1", "3"]
    assert {h["__connect.errors.topic"] for h in headers} == {topic}
    assert {h["__connect.errors.connector.name"] for h in headers} == {"dlq-sink"}
    assert {h["__connect.errors.task.id"] for h in headers} == {"0"}
    assert {h["__connect.errors.stage"] for h in headers} == {"VALUE_CONVERTER"}


async def test_an_exactly_once_source_in_a_host_commits_records_and_offsets_together(kafka: Broker) -> None:
    tag = uuid.uuid4().hex[:10]
    topic = f"eos-{tag}"
    worker = _worker(
        kafka,
        **{
            "task.processes": "1",
            "exactly.once.source.support": "enabled",
            "offset.storage.topic": f"offsets-{tag}",
            "config.storage.topic": f"configs-{tag}",
        },
    )
    config = {"connector.class": f"{MODULE}.CountingConnector", "topic": topic, "count": "300", **STRINGS}

    async def offset_reached(engine: Engine, n: int) -> None:
        async def reached() -> bool:
            offsets = (await engine.connector_offsets("eos"))["offsets"]
            return bool(offsets) and offsets[0]["offset"]["n"] >= n

        await eventually(reached, timeout=60, interval=0.1, message=f"offset {n} committed")

    async with Engine(worker) as engine:
        await engine.topics.create_topic(topic, 1)
        await engine.create_connector("eos", config)
        await engine.wait_for_state("eos", "RUNNING", tasks=1)
        pid = _host_pid(engine, "eos", 0)
        await offset_reached(engine, 60)  # the worker's store has the offsets the host's transactions wrote
        os.kill(pid, signal.SIGKILL)  # mid-stream: its open transaction is never committed
        status = await engine.wait_for_state("eos", "RUNNING", tasks=["FAILED"])
        assert status is not None
        assert "SIGKILL" in status["tasks"][0]["trace"]
        await engine.restart_task("eos", 0)  # a new host: its producer fences the old transaction
        await engine.wait_for_state("eos", "RUNNING", tasks=1)
        assert _host_pid(engine, "eos", 0) != pid
        await offset_reached(engine, 300)
    # every record once: what the killed host's open transaction sent was aborted, and the task resumed
    # after its last committed offset
    assert await committed_values(kafka, topic, expect=300) == [f"v-{n}" for n in range(1, 301)]
    async with Engine({**worker, "task.processes": "0"}) as engine:  # read back from the offsets topic
        offsets = (await engine.connector_offsets("eos"))["offsets"]
        assert offsets == [{"partition": {"p": 0}, "offset": {"n": 300}}]
