"""Data-plane benchmark: records/s from source tasks -> one topic -> sink tasks.

Each engine figure has a baseline measured in the same run, moving the same data:

* in-process topics (``MemoryTopics``): baseline = a bare loop over the same in-process log
  (``producer().send`` for every value, awaiting the futures, then a group consumer's ``getmany``
  until every record is read);
* a Kafka-protocol broker (noida, started here on 127.0.0.1): baseline = raw aiokafka
  (``AIOKafkaProducer(acks="all", enable_idempotence=False)``: send all, then flush; ``AIOKafkaConsumer``
  group members reading with ``getmany`` until every record is read).

Payloads: byte pass-through (ByteArrayConverter, 100-byte values; the baselines send the same
bytes), schema-less JSON (JsonConverter, ``schemas.enable=false``, small dicts) and JSON with
schemas (a Struct; the envelope JsonConverter writes). For JSON the baselines do what any real
pipeline does: encode each value with orjson before sending and decode each one read. Also a
3-SMT chain on the sink (InsertField, ReplaceField, TimestampRouter; against the same JSON
baseline) and 4 partitions with ``tasks.max=4`` on both connectors (baseline: 4 consumers in one
group). Records are built before timing; the engine clock runs from a source task's first ``poll``
to the sink tasks' ``put`` holding the last record, the baseline clock from the first send to the
last record read. Sink tasks and baseline consumers own every partition before the clock starts.
A fresh topic per measurement; median of 3, engine and baseline alternating.

Targets: broker bytes and schema-less JSON >= 0.8x their baseline; in-process bytes >= 0.6x.

Also ``bytes-poll``: the source task builds its 1,000 records in ``poll()`` (issue 29), beside the
pre-built ``bytes``. Brokers: noida and Apache Kafka 4.1 (``--brokers``).

    python bench/data_plane.py [--records N] [--broker-records N] [--brokers noida,kafka] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
import structlog  # noqa: E402
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: E402

from bench.data_connectors import BUILDING_SOURCE, RUNS, SINK, SOURCE, Run  # noqa: E402
from bench.report import append_to  # noqa: E402
from bench.runtimes import BENCH_JVM, BENCH_JVM_TEXT  # noqa: E402
from engine import Engine  # noqa: E402
from engine.api import SourceRecord  # noqa: E402
from engine.converters.json_converter import JsonConverter  # noqa: E402
from engine.data import Schema, SchemaBuilder, Struct  # noqa: E402
from engine.testing.kafka import apache_kafka  # noqa: E402
from engine.topics.memory import MemoryTopics  # noqa: E402
from tests.integration.brokers import running_broker  # noqa: E402

BATCH = 1000  # records per poll
REPEATS = 3
MAX_POLL = 2000  # consumer.max.poll.records for the engine; max_records for the baseline getmany
RUN_TIMEOUT_S = 180.0
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {
    "bytes": {"key.converter": BYTES, "value.converter": BYTES},
    "json": {
        "key.converter": JSON,
        "key.converter.schemas.enable": "false",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
    },
    "schema": {"key.converter": JSON, "value.converter": JSON},  # schemas.enable=true, Kafka's default
}
SMTS = {
    "transforms": "insert,replace,route",
    "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.insert.static.field": "pipeline",
    "transforms.insert.static.value": "bench",
    "transforms.replace.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
    "transforms.replace.exclude": "active",
    "transforms.route.type": "org.apache.kafka.connect.transforms.TimestampRouter",
}
VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.Customer")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("amount", Schema.FLOAT64_SCHEMA)
    .field("active", Schema.BOOLEAN_SCHEMA)
    .build()
)


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    payload: str  # bytes | json | schema
    baseline: str
    partitions: int = 1
    tasks: int = 1
    sink_extra: dict[str, str] = field(default_factory=dict)
    target: float | None = None
    build: bool = False  # the source task builds its records in poll() instead of handing out pre-built ones


MEMORY_SCENARIOS = [
    Scenario("bytes", "byte pass-through (100 B)", "bytes", "bare in-process loop", target=0.6),
    Scenario("json", "schema-less JSON", "json", "bare in-process loop + orjson both ways"),
]
BROKER_SCENARIOS = [
    Scenario("bytes", "byte pass-through (100 B)", "bytes", "raw aiokafka", target=0.8),
    Scenario(
        "bytes-poll",
        "byte pass-through (100 B), records built in `poll()`",
        "bytes",
        "raw aiokafka",
        target=0.9,
        build=True,
    ),
    # the targets of issue 29 (the data plane at the floor of a Python worker)
    Scenario("json", "schema-less JSON", "json", "raw aiokafka + orjson both ways", target=0.85),
    Scenario(
        "schema",
        "JSON with schemas (Struct)",
        "schema",
        "raw aiokafka + orjson both ways (same envelope)",
        target=0.7,
    ),
    Scenario(
        "smt",
        "schema-less JSON + 3 SMTs on the sink",
        "json",
        "raw aiokafka + orjson both ways",
        sink_extra=SMTS,
        target=0.7,
    ),
    Scenario(
        "4x4",
        "schema-less JSON, 4 partitions, tasks.max=4",
        "json",
        "raw aiokafka + orjson both ways, 4 consumers",
        partitions=4,
        tasks=4,
        target=0.85,
    ),
]


@dataclass
class Payload:
    """What the source tasks emit, and what the baselines send for it."""

    values: list[Any]
    schema: Schema | None
    baseline: list[Any]  # bytes (sent as they are) or JSON trees (orjson-encoded while timed)
    encode: bool


def payload(kind: str, n: int) -> Payload:
    if kind == "bytes":
        raw = [(b"%010d" % i) * 10 for i in range(n)]  # 100 bytes each
        return Payload(list(raw), None, raw, encode=False)
    dicts = [{"id": i, "name": f"customer-{i}", "amount": i * 1.25, "active": i % 2 == 0} for i in range(n)]
    if kind == "json":
        return Payload(dicts, None, dicts, encode=True)
    converter = JsonConverter()
    converter.configure({}, is_key=False)
    schema_node = orjson.loads(converter.schema_json(VALUE_SCHEMA))
    structs = [
        Struct(VALUE_SCHEMA)
        .put("id", d["id"])
        .put("name", d["name"])
        .put("amount", d["amount"])
        .put("active", d["active"])
        for d in dicts
    ]
    return Payload(structs, VALUE_SCHEMA, [{"schema": schema_node, "payload": d} for d in dicts], encode=True)


def batches(topic: str, data: Payload) -> list[list[SourceRecord]]:
    partition = {"bench": "data-plane"}
    records = [
        SourceRecord(
            topic=topic, value=v, value_schema=data.schema, source_partition=partition, source_offset={"i": i}
        )
        for i, v in enumerate(data.values)
    ]
    return [records[i : i + BATCH] for i in range(0, len(records), BATCH)]


def _name() -> str:
    return uuid.uuid4().hex[:10]


# ---- engine ----------------------------------------------------------------------------------


async def engine_run(engine: Engine, scenario: Scenario, data: Payload) -> float:
    """Seconds from a source task's first poll to the sink tasks holding every record."""
    name = _name()
    topic = f"bench-{name}"
    await engine.topics.create_topic(topic, scenario.partitions)
    if scenario.build:
        run = RUNS[name] = Run([], len(data.values), partitions=scenario.partitions, build_topic=topic)
    else:
        run = RUNS[name] = Run(batches(topic, data), len(data.values), partitions=scenario.partitions)
    config = {"bench.run": name, "tasks.max": str(scenario.tasks), **CONVERTERS[scenario.payload]}
    source = BUILDING_SOURCE if scenario.build else SOURCE
    try:
        await engine.create_connector(
            f"sink-{name}", {"connector.class": SINK, "topics": topic, **config, **scenario.sink_extra}
        )
        async with asyncio.timeout(RUN_TIMEOUT_S):
            await run.assigned.wait()  # the sink owns every partition before anything is sent
        await engine.create_connector(f"source-{name}", {"connector.class": source, **config})
        async with asyncio.timeout(RUN_TIMEOUT_S):
            await run.done.wait()
    finally:
        for connector in (f"source-{name}", f"sink-{name}"):
            if connector in await engine.connectors():
                await engine.delete_connector(connector)
        del RUNS[name]
    return run.seconds


# ---- baselines -------------------------------------------------------------------------------


async def memory_baseline(data: Payload) -> float:
    """The bare in-process log: send every value (encoded with orjson when JSON, awaiting the
    futures), then read them all (decoding each when JSON)."""
    topics = MemoryTopics()
    await topics.open()
    try:
        topic = f"base-{_name()}"
        await topics.create_topic(topic, 1)
        consumer = await topics.consumer(f"group-{topic}", [topic])
        await consumer.getmany(0)  # join: the member takes its assignment
        assert consumer.assignment()
        producer = topics.producer()
        values, encode, dumps, loads = data.baseline, data.encode, orjson.dumps, orjson.loads
        n = len(values)
        started = time.perf_counter()
        for i in range(0, n, BATCH):
            chunk = values[i : i + BATCH]
            for future in [producer.send(topic, None, dumps(v) if encode else v) for v in chunk]:
                await future
        seen = 0
        while seen < n:
            records = await consumer.getmany(1000, MAX_POLL)
            if encode:
                for record in records:
                    loads(record.value)  # type: ignore[arg-type]
            seen += len(records)
        elapsed = time.perf_counter() - started
        await consumer.close()
        return elapsed
    finally:
        await topics.close()


async def kafka_baseline(engine: Engine, bootstrap: str, scenario: Scenario, data: Payload) -> float:
    """Raw aiokafka: send all without awaiting each, flush; joined group consumers read all."""
    topic = f"base-{_name()}"
    await engine.topics.create_topic(topic, scenario.partitions)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
    group = f"group-{topic}"
    # the engine's consumer settings (KafkaTopics.consumer): no auto-commit, 100 ms fetch wait
    consumers = [
        AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=2000,
            fetch_max_wait_ms=100,
        )
        for _ in range(scenario.tasks)
    ]
    values, encode, dumps, loads = data.baseline, data.encode, orjson.dumps, orjson.loads
    n = len(values)
    seen = 0
    done = asyncio.Event()

    async def read(consumer: AIOKafkaConsumer) -> None:
        nonlocal seen
        while not done.is_set():
            got = await consumer.getmany(timeout_ms=100, max_records=MAX_POLL)
            for records in got.values():
                if encode:
                    for record in records:
                        loads(record.value)
                seen += len(records)
            if seen >= n:
                done.set()

    await producer.start()
    try:
        for consumer in consumers:
            await consumer.start()
        try:
            await producer.partitions_for(topic)  # metadata, as the engine's producer has it warm
            async with asyncio.timeout(RUN_TIMEOUT_S):
                while sum(len(c.assignment()) for c in consumers) < scenario.partitions or any(
                    not c.assignment() for c in consumers[: scenario.partitions]
                ):
                    await asyncio.gather(*(c.getmany(timeout_ms=100) for c in consumers))
            started = time.perf_counter()
            readers = [asyncio.ensure_future(read(c)) for c in consumers]
            for value in values:
                await producer.send(topic, dumps(value) if encode else value)  # queued, not awaited
            await producer.flush()
            async with asyncio.timeout(RUN_TIMEOUT_S):
                await done.wait()
            elapsed = time.perf_counter() - started
            await asyncio.gather(*readers)
            return elapsed
        finally:
            for consumer in consumers:
                await consumer.stop()
    finally:
        await producer.stop()


# ---- measuring -------------------------------------------------------------------------------


async def measure(
    where: str,
    scenario: Scenario,
    n: int,
    engine_once: Callable[[], Awaitable[float]],
    baseline_once: Callable[[], Awaitable[float]],
) -> dict[str, Any]:
    """Median of REPEATS, engine and baseline alternating so drift hits both alike."""
    engine_s, baseline_s = [], []
    for _ in range(REPEATS):
        engine_s.append(await engine_once())
        baseline_s.append(await baseline_once())
    row = {
        "where": where,
        "scenario": scenario,
        "n": n,
        "engine": n / statistics.median(engine_s),
        "baseline": n / statistics.median(baseline_s),
        "engine_runs": [n / s for s in engine_s],
        "baseline_runs": [n / s for s in baseline_s],
    }
    row["ratio"] = row["engine"] / row["baseline"]
    print(
        f"{where:10} {scenario.key:6}  engine {row['engine']:>9,.0f} rec/s  baseline {row['baseline']:>9,.0f} "
        f"rec/s  ratio {row['ratio']:.2f}",
        file=sys.stderr,
        flush=True,
    )
    return row


WORKER = {"consumer.max.poll.records": str(MAX_POLL), "task.shutdown.graceful.timeout.ms": "10000"}


async def in_process(n: int, only: set[str] | None) -> list[dict[str, Any]]:
    rows = []
    async with Engine(dict(WORKER), topics=MemoryTopics()) as engine:
        for scenario in MEMORY_SCENARIOS:
            if only and scenario.key not in only:
                continue
            data = payload(scenario.payload, n)
            rows.append(
                await measure(
                    "in-process",
                    scenario,
                    n,
                    lambda s=scenario, d=data: engine_run(engine, s, d),
                    lambda d=data: memory_baseline(d),
                )
            )
    return rows


BROKERS = {"noida": "noida", "kafka": "Apache Kafka 4.1"}


@contextlib.contextmanager
def broker_at(name: str) -> Iterator[str]:
    """The bootstrap address of a started broker: noida, or Apache Kafka 4.1 (one KRaft node, JIT JVM)."""
    if name == "kafka":
        with apache_kafka("4.1", jvm_options=BENCH_JVM) as kafka:
            yield kafka.bootstrap_servers()
    else:
        with running_broker(name) as broker:
            yield broker.bootstrap


async def on_broker(name: str, n: int, only: set[str] | None) -> list[dict[str, Any]]:
    rows = []
    with broker_at(name) as bootstrap:
        worker = {
            **WORKER,
            "bootstrap.servers": bootstrap,
            "config.storage.topic": f"bench-configs-{_name()}",
            "consumer.session.timeout.ms": "6000",
        }
        async with Engine(worker) as engine:
            for scenario in BROKER_SCENARIOS:
                if only and scenario.key not in only:
                    continue
                data = payload(scenario.payload, n)
                rows.append(
                    await measure(
                        BROKERS[name],
                        scenario,
                        n,
                        lambda s=scenario, d=data: engine_run(engine, s, d),
                        lambda s=scenario, d=data: kafka_baseline(engine, bootstrap, s, d),
                    )
                )
    return rows


def markdown(rows: list[dict[str, Any]], command: str, n_memory: int, n_broker: int, load: float) -> str:
    lines = [
        "## Data plane: source tasks -> topic -> sink tasks",
        "",
        f"Command: `{command}` ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, 1-min load average {load:.1f} at start, "
        f"run {time.strftime('%Y-%m-%d')}).",
        "",
        (
            "**Taken under load**: the machine is shared with other work; the ratios are same-run."
            if load > (os.cpu_count() or 1)
            else "Taken on a quiet machine; the ratios are same-run."
        ),
        "",
        f"N = {n_memory:,} records in process, {n_broker:,} through the broker; one fresh topic per measurement; "
        f"median of {REPEATS} (engine and baseline alternating). The source tasks return pre-built batches of "
        f"{BATCH} `SourceRecord`s, except `bytes-poll`, whose one source task builds its {BATCH} records in "
        "`poll()` (100-byte values made there, as a real connector does); the sink tasks count `put`. Engine clock: first `poll` -> last record in "
        "`put`. Baseline clock: first send -> last record read. Sink tasks and baseline consumers own every "
        "partition before the clock starts.",
        "",
        "- in-process: engine on `MemoryTopics`; baseline = a bare loop over the same in-process log "
        "(`producer().send` per value, awaiting the futures, then a group consumer's `getmany` until all N are "
        "read).",
        "- noida / Apache Kafka 4.1: a broker on 127.0.0.1 (noida; or one KRaft node from Apache Kafka's Maven "
        f"jars on a {BENCH_JVM_TEXT}); engine on Kafka topics; baseline = raw aiokafka "
        '(`AIOKafkaProducer(acks="all", enable_idempotence=False)`, send all without awaiting each, flush; '
        "`AIOKafkaConsumer` group members, `getmany` until all N are read).",
        f"- `consumer.max.poll.records={MAX_POLL}` in the engine's worker config (Kafka's default is 500) and "
        f"`max_records={MAX_POLL}` for the baseline `getmany`. Bytes = `ByteArrayConverter`, 100 B values, sent "
        "as they are by the baselines. JSON = `JsonConverter`, small dicts (~70 B encoded; with schemas, a "
        "Struct of the same 4 fields in Connect's schema envelope); the JSON baselines encode every value "
        "with `orjson.dumps` before sending and decode every value read with `orjson.loads`. 3 SMTs = "
        "`InsertField$Value` (static field), `ReplaceField$Value` (exclude), `TimestampRouter` on the sink.",
        "",
        "| scenario | payload | engine rec/s | baseline rec/s | ratio (engine / baseline) | target |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        scenario: Scenario = r["scenario"]
        target = (
            "-"
            if scenario.target is None
            else f">= {scenario.target} " + ("met" if r["ratio"] >= scenario.target else "**missed**")
        )
        lines.append(
            f"| {r['where']} (N={r['n']:,}) | {scenario.label} | {r['engine']:,.0f} | "
            f"{r['baseline']:,.0f} ({scenario.baseline}) | {r['ratio']:.2f} | {target} |"
        )
    lines += ["", "Runs (rec/s), engine / baseline:", ""]
    for r in rows:
        lines.append(
            f"- {r['where']} {r['scenario'].key}: "
            f"{', '.join(f'{x:,.0f}' for x in r['engine_runs'])} / "
            f"{', '.join(f'{x:,.0f}' for x in r['baseline_runs'])}"
        )
    return "\n".join(lines) + "\n"


def quiet() -> None:
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))


async def run(
    n_memory: int, n_broker: int, brokers: list[str], only: set[str] | None
) -> list[dict[str, Any]]:
    rows = await in_process(n_memory, only) if not only or only & {s.key for s in MEMORY_SCENARIOS} else []
    for name in brokers:
        rows += await on_broker(name, n_broker, only)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000, help="records per in-process measurement")
    parser.add_argument("--broker-records", type=int, default=50_000, help="records per broker measurement")
    parser.add_argument("--no-broker", action="store_true", help="in-process scenarios only")
    parser.add_argument(
        "--brokers",
        default="noida,kafka",
        help="comma-separated brokers: noida, kafka (Apache Kafka 4.1 from Maven jars)",
    )
    parser.add_argument(
        "--only", action="append", help="run only these scenarios (bytes, json, schema, smt, 4x4)"
    )
    parser.add_argument("--append", metavar="FILE", help="append the markdown section to FILE")
    args = parser.parse_args()
    quiet()
    load = os.getloadavg()[0]
    brokers = [] if args.no_broker else [b for b in args.brokers.split(",") if b]
    rows = asyncio.run(run(args.records, args.broker_records, brokers, set(args.only or ()) or None))
    command = "python bench/data_plane.py " + " ".join(sys.argv[1:])
    report = markdown(rows, command.strip(), args.records, args.broker_records, load)
    print(report)
    append_to(args.append, "\n" + report)


if __name__ == "__main__":
    main()
