"""Data-plane benchmark: records/s for one source task -> one topic -> one sink task.

Each engine figure has a baseline measured in the same run, moving the same bytes:

* in-process topics (``MemoryTopics``): baseline = a bare loop over the same in-process log
  (``producer().send`` for every pre-encoded value, awaiting the futures, then a group consumer's
  ``getmany`` until every record is read);
* a Kafka-protocol broker (noida, started here on 127.0.0.1): baseline = raw aiokafka
  (``AIOKafkaProducer(acks="all", enable_idempotence=False)``: send all, then flush; an
  ``AIOKafkaConsumer`` group member reading with ``getmany`` until every record is read).

Two payloads: byte pass-through (ByteArrayConverter, 100-byte values) and schema-less JSON
(JsonConverter, ``schemas.enable=false``, small dicts; the baselines send the JSON bytes encoded
once up front and decode nothing). Records are built before timing; the engine clock runs from
the source task's first ``poll`` to the sink task's ``put`` holding the last record, the baseline
clock from the first send to the last record read. Sink task and baseline consumer have joined
their group (own their partition) before the clock starts. A fresh 1-partition topic per
measurement; median of 3. Target: engine >= 0.8x raw aiokafka on the broker.

    python bench/data_plane.py [--records N] [--broker-records N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: E402

from bench.data_connectors import RUNS, SINK, SOURCE, Run  # noqa: E402
from engine import Engine  # noqa: E402
from engine.api import SourceRecord  # noqa: E402
from engine.topics.memory import MemoryTopics  # noqa: E402
from tests.integration.brokers import running_broker  # noqa: E402

BATCH = 1000  # records per poll
REPEATS = 3
MAX_POLL = 2000  # consumer.max.poll.records for the engine; max_records for the baseline getmany
RUN_TIMEOUT_S = 120.0
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
CONVERTERS = {
    "bytes": {"key.converter": BYTES, "value.converter": BYTES},
    "json": {"key.converter": JSON, "key.converter.schemas.enable": "false",
             "value.converter": JSON, "value.converter.schemas.enable": "false"},
}
PAYLOADS = {"bytes": "byte pass-through (100 B)", "json": "schema-less JSON"}


def payload(kind: str, n: int) -> tuple[list[Any], list[bytes]]:
    """What the source task emits, and the bytes the baselines send for it."""
    if kind == "bytes":
        raw = [(b"%010d" % i) * 10 for i in range(n)]  # 100 bytes each
        return list(raw), raw
    values = [{"id": i, "name": f"customer-{i}", "amount": i * 1.25, "active": i % 2 == 0} for i in range(n)]
    return values, [json.dumps(v, separators=(",", ":")).encode() for v in values]


def batches(topic: str, values: list[Any]) -> list[list[SourceRecord]]:
    partition = {"bench": "data-plane"}
    records = [SourceRecord(topic=topic, value=v, source_partition=partition, source_offset={"i": i})
               for i, v in enumerate(values)]
    return [records[i:i + BATCH] for i in range(0, len(records), BATCH)]


def _name() -> str:
    return uuid.uuid4().hex[:10]


# ---- engine ----------------------------------------------------------------------------------

async def engine_run(engine: Engine, kind: str, values: list[Any]) -> float:
    """Seconds from the source task's first poll to the sink task holding every record."""
    name = _name()
    topic = f"bench-{name}"
    await engine.topics.create_topic(topic, 1)
    run = RUNS[name] = Run(batches(topic, values), len(values))
    config = {"bench.run": name, "tasks.max": "1", **CONVERTERS[kind]}
    try:
        await engine.create_connector(f"sink-{name}", {"connector.class": SINK, "topics": topic, **config})
        async with asyncio.timeout(RUN_TIMEOUT_S):
            await run.assigned.wait()  # the sink owns the partition before anything is sent
        await engine.create_connector(f"source-{name}", {"connector.class": SOURCE, **config})
        async with asyncio.timeout(RUN_TIMEOUT_S):
            await run.done.wait()
    finally:
        for connector in (f"source-{name}", f"sink-{name}"):
            if connector in await engine.connectors():
                await engine.delete_connector(connector)
        del RUNS[name]
    return run.seconds


# ---- baselines -------------------------------------------------------------------------------

async def memory_baseline(raw: list[bytes]) -> float:
    """The bare in-process log: send every value (awaiting the futures), then read them all."""
    topics = MemoryTopics()
    await topics.open()
    try:
        topic = f"base-{_name()}"
        await topics.create_topic(topic, 1)
        consumer = await topics.consumer(f"group-{topic}", [topic])
        await consumer.getmany(0)  # join: the member takes its assignment
        assert consumer.assignment()
        producer = topics.producer()
        n = len(raw)
        started = time.perf_counter()
        for i in range(0, n, BATCH):
            for future in [producer.send(topic, None, value) for value in raw[i:i + BATCH]]:
                await future
        seen = 0
        while seen < n:
            seen += len(await consumer.getmany(1000, MAX_POLL))
        elapsed = time.perf_counter() - started
        await consumer.close()
        return elapsed
    finally:
        await topics.close()


async def kafka_baseline(engine: Engine, bootstrap: str, raw: list[bytes]) -> float:
    """Raw aiokafka: send all without awaiting each, flush; a joined group consumer reads all."""
    topic = f"base-{_name()}"
    await engine.topics.create_topic(topic, 1)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
    # the engine's consumer settings (engine/topics/kafka.py): no auto-commit, 100 ms fetch wait
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"group-{topic}",
                                auto_offset_reset="earliest", enable_auto_commit=False,
                                session_timeout_ms=6000, heartbeat_interval_ms=2000, fetch_max_wait_ms=100)
    await producer.start()
    try:
        await consumer.start()
        try:
            await producer.partitions_for(topic)  # metadata, as the engine's producer has it warm
            async with asyncio.timeout(RUN_TIMEOUT_S):
                while not consumer.assignment():
                    await consumer.getmany(timeout_ms=100)
            n = len(raw)
            started = time.perf_counter()
            for value in raw:
                await producer.send(topic, value)  # queues; the delivery future is not awaited
            await producer.flush()
            seen = 0
            async with asyncio.timeout(RUN_TIMEOUT_S):
                while seen < n:
                    got = await consumer.getmany(timeout_ms=1000, max_records=MAX_POLL)
                    seen += sum(len(records) for records in got.values())
            return time.perf_counter() - started
        finally:
            await consumer.stop()
    finally:
        await producer.stop()


# ---- measuring -------------------------------------------------------------------------------

async def measure(scenario: str, kind: str, n: int, engine_once: Callable[[], Awaitable[float]],
                  baseline_once: Callable[[], Awaitable[float]]) -> dict[str, Any]:
    """Median of REPEATS, engine and baseline alternating so drift hits both alike."""
    engine_s, baseline_s = [], []
    for _ in range(REPEATS):
        engine_s.append(await engine_once())
        baseline_s.append(await baseline_once())
    row = {"scenario": scenario, "payload": kind, "n": n,
           "engine": n / statistics.median(engine_s), "baseline": n / statistics.median(baseline_s),
           "engine_runs": [n / s for s in engine_s], "baseline_runs": [n / s for s in baseline_s]}
    row["ratio"] = row["engine"] / row["baseline"]
    print(f"{scenario:10} {kind:5}  engine {row['engine']:>9,.0f} rec/s  baseline {row['baseline']:>9,.0f} rec/s"
          f"  ratio {row['ratio']:.2f}", file=sys.stderr, flush=True)
    return row


WORKER = {"consumer.max.poll.records": str(MAX_POLL), "task.shutdown.graceful.timeout.ms": "10000"}


async def in_process(n: int) -> list[dict[str, Any]]:
    rows = []
    async with Engine(dict(WORKER), topics=MemoryTopics()) as engine:
        for kind in ("bytes", "json"):
            values, raw = payload(kind, n)
            rows.append(await measure("in-process", kind, n, lambda k=kind, v=values: engine_run(engine, k, v),
                                      lambda r=raw: memory_baseline(r)))
    return rows


async def on_broker(n: int) -> list[dict[str, Any]]:
    rows = []
    with running_broker("noida") as broker:
        worker = {**WORKER, "bootstrap.servers": broker.bootstrap,
                  "config.storage.topic": f"bench-configs-{_name()}", "consumer.session.timeout.ms": "6000"}
        async with Engine(worker) as engine:
            for kind in ("bytes", "json"):
                values, raw = payload(kind, n)
                rows.append(await measure("broker", kind, n, lambda k=kind, v=values: engine_run(engine, k, v),
                                          lambda r=raw: kafka_baseline(engine, broker.bootstrap, r)))
    return rows


def markdown(rows: list[dict[str, Any]], command: str, n_memory: int, n_broker: int, load: float) -> str:
    lines = [
        "## Data plane: source task -> topic -> sink task",
        "",
        f"Command: `{command}` ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, 1-min load average {load:.1f} at start, "
        f"run {time.strftime('%Y-%m-%d')}).",
        "",
        f"N = {n_memory:,} records in process, {n_broker:,} through the broker; one source task, one sink task, "
        f"one fresh 1-partition topic per measurement; median of {REPEATS} (engine and baseline alternating).",
        f"The source task returns pre-built batches of {BATCH} `SourceRecord`s; the sink task counts `put`. "
        "Engine clock: first `poll` -> last record in `put`. Baseline clock: first send -> last record read.",
        "Sink task and baseline consumer have joined their group before the clock starts.",
        "",
        "- in-process: engine on `MemoryTopics`; baseline = a bare loop over the same in-process log "
        "(`producer().send` of the same pre-encoded bytes, awaiting the futures, then a group consumer's "
        "`getmany` until all N are read). No target; the ratio is reported.",
        "- broker: noida on 127.0.0.1; engine on Kafka topics; baseline = raw aiokafka "
        "(`AIOKafkaProducer(acks=\"all\", enable_idempotence=False)`, send all without awaiting each, flush; "
        "`AIOKafkaConsumer` group member, `getmany` until all N are read). **Target: engine >= 0.8x baseline.**",
        f"- both: `consumer.max.poll.records={MAX_POLL}` in the engine's worker config (Kafka's default is 500) "
        f"and `max_records={MAX_POLL}` for the baseline `getmany`. JSON = `JsonConverter`, "
        "`schemas.enable=false`, small dicts (~70 B encoded); the baselines send the same JSON bytes encoded "
        "once up front and decode nothing. Byte pass-through = `ByteArrayConverter`, 100 B values.",
        "",
        "| scenario | payload | engine rec/s | baseline rec/s | ratio (engine / baseline) | target |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        target = ">= 0.8 " + ("met" if r["ratio"] >= 0.8 else "**missed**") if r["scenario"] == "broker" else "-"
        baseline = "bare in-process loop" if r["scenario"] == "in-process" else "raw aiokafka"
        lines.append(f"| {r['scenario']} (N={r['n']:,}) | {PAYLOADS[r['payload']]} | {r['engine']:,.0f} | "
                     f"{r['baseline']:,.0f} ({baseline}) | {r['ratio']:.2f} | {target} |")
    lines += ["", "Runs (rec/s), engine / baseline:", ""]
    for r in rows:
        lines.append(f"- {r['scenario']} {r['payload']}: "
                     f"{', '.join(f'{x:,.0f}' for x in r['engine_runs'])} / "
                     f"{', '.join(f'{x:,.0f}' for x in r['baseline_runs'])}")
    return "\n".join(lines) + "\n"


def quiet() -> None:
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))


async def run(n_memory: int, n_broker: int, broker: bool) -> list[dict[str, Any]]:
    rows = await in_process(n_memory)
    if broker:
        rows += await on_broker(n_broker)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000, help="records per in-process measurement")
    parser.add_argument("--broker-records", type=int, default=50_000, help="records per broker measurement")
    parser.add_argument("--no-broker", action="store_true", help="in-process scenarios only")
    parser.add_argument("--append", metavar="FILE", help="append the markdown section to FILE")
    args = parser.parse_args()
    quiet()
    load = os.getloadavg()[0]
    rows = asyncio.run(run(args.records, args.broker_records, not args.no_broker))
    command = "python bench/data_plane.py " + " ".join(sys.argv[1:])
    report = markdown(rows, command.strip(), args.records, args.broker_records, load)
    print(report)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as out:
            out.write("\n" + report)


if __name__ == "__main__":
    main()
