"""AvroConverter against bare fastavro: records/s writing and reading the same records, same run.

Converter: ``from_connect_data(topic, schema, Struct)`` (Connect value -> Avro value, fastavro
schemaless write, Confluent framing) and ``to_connect_data(topic, bytes)`` (unframe, fastavro
schemaless read, Avro value -> Struct), after its one registry round trip per schema (made
before the clock starts, against a real Apicurio Registry started here). Baseline: fastavro's
``schemaless_writer``/``schemaless_reader`` on the same Avro schema (the one the converter
registered) with plain dicts, into/out of a ``BytesIO`` per record: what a hand-written
pipeline without Connect's data model does. The record: 10 fields (ints, strings, an optional
string, a double, a boolean, a Decimal, a Timestamp, a string map). Median of 5 rounds; within a round
converter and baseline alternate in blocks of 500 records, so load from other processes falls on both.

Then the data plane with Avro on Apache Kafka 4.1 (``engine.testing.kafka``, one node): records/s
from a source task's first poll to the sink task holding the last record, with AvroConverter and,
for scale, JsonConverter with schemas (``bench/data_plane.py``'s engine run and its 4-field
Struct); baseline: raw aiokafka (send all, flush; a group consumer reads all) with fastavro
schemaless encoding each value before sending and decoding each one read. Median of 3, alternating.

    python bench/avro_converter.py [--records N] [--pipeline-records N | --no-pipeline] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import decimal
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fastavro

from bench.report import alternating_blocks, append_to
from engine.converters.registry.avro import AvroConverter
from engine.data.builder import SchemaBuilder
from engine.data.logical import Decimal, Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct
from tests.schema_registry import start_registry

SCHEMA = (
    SchemaBuilder.struct()
    .name("bench.Order")
    .field("id", Schema.INT64_SCHEMA)
    .field("customer", Schema.STRING_SCHEMA)
    .field("qty", Schema.INT32_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("price", Schema.FLOAT64_SCHEMA)
    .field("paid", Schema.BOOLEAN_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("at", Timestamp.schema())
    .field("sku", Schema.STRING_SCHEMA)
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .build()
)
ROUNDS = 5
BLOCK = 500  # records per timed block; converter and baseline alternate block by block


def records(n: int) -> tuple[list[Struct], list[dict[str, Any]]]:
    structs, dicts = [], []
    at = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for i in range(n):
        plain = {
            "id": i,
            "customer": f"customer-{i % 97}",
            "qty": i % 13,
            "note": None if i % 3 else "gift",
            "price": i * 0.5,
            "paid": bool(i % 2),
            "amount": decimal.Decimal(i).scaleb(-2),
            "at": at + dt.timedelta(seconds=i),
            "sku": f"SKU-{i:08d}",
            "attrs": {"color": "red", "size": "M"},
        }
        struct = Struct(SCHEMA)
        for key, value in plain.items():
            struct.put(key, value)
        structs.append(struct)
        dicts.append(plain)
    return structs, dicts


def rate(n: int, seconds: float) -> float:
    return n / seconds


async def fastavro_kafka_baseline(bootstrap: str, dicts: list[dict[str, Any]], parsed: Any) -> float:
    """Raw aiokafka with fastavro schemaless both ways: the clock from the first send to the last record decoded."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"base-avro-{time.monotonic_ns()}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=False)
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"g-{topic}",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=2000,
        fetch_max_wait_ms=100,
    )
    write, read = fastavro.schemaless_writer, fastavro.schemaless_reader
    n = len(dicts)
    await producer.start()
    await consumer.start()
    try:
        await producer.partitions_for(topic)
        while not consumer.assignment():
            await consumer.getmany(timeout_ms=100)
        started = time.perf_counter()
        seen = 0

        async def reader() -> None:
            nonlocal seen
            while seen < n:
                got = await consumer.getmany(timeout_ms=100, max_records=2000)
                for records in got.values():
                    for record in records:
                        read(io.BytesIO(record.value), parsed, None)
                    seen += len(records)

        reading = asyncio.ensure_future(reader())
        for d in dicts:
            out = io.BytesIO()
            write(out, parsed, d)
            await producer.send(topic, out.getvalue())
        await producer.flush()
        await asyncio.wait_for(reading, 180)
        return time.perf_counter() - started
    finally:
        await consumer.stop()
        await producer.stop()


async def pipeline(n: int, registry_url: str) -> list[tuple[str, float, list[float]]]:
    """(label, median records/s, runs) for Avro, JSON with schemas and the fastavro baseline on Apache Kafka."""
    from bench import data_plane
    from engine import Engine
    from engine.testing.kafka import apache_kafka

    avro = "io.confluent.connect.avro.AvroConverter"
    data_plane.CONVERTERS["avro"] = {
        "key.converter": avro,
        "value.converter": avro,
        "key.converter.schema.registry.url": registry_url,
        "value.converter.schema.registry.url": registry_url,
    }
    scenario = data_plane.Scenario("avro", "Avro", "avro", "raw aiokafka + fastavro both ways")
    json_scenario = data_plane.Scenario("schema", "JSON with schemas", "schema", "")
    data = data_plane.payload("schema", n)  # Structs of bench.Customer; the JSON scenario's too
    dicts = [{f.name: s.get(f.name) for f in data_plane.VALUE_SCHEMA.fields} for s in data.values]
    converter = AvroConverter()
    converter.configure({"schema.registry.url": registry_url}, False)
    parsed = fastavro.parse_schema(converter.avro_data.from_connect_schema(data_plane.VALUE_SCHEMA))
    runs: dict[str, list[float]] = {"avro": [], "json": [], "base": []}
    with apache_kafka("4.1") as kafka:
        bootstrap = kafka.bootstrap_servers()
        worker = {
            **data_plane.WORKER,
            "bootstrap.servers": bootstrap,
            "config.storage.topic": f"bench-configs-{time.monotonic_ns()}",
            "consumer.session.timeout.ms": "6000",
        }
        async with Engine(worker) as engine:
            for _ in range(data_plane.REPEATS):
                runs["avro"].append(n / await data_plane.engine_run(engine, scenario, data))
                runs["json"].append(n / await data_plane.engine_run(engine, json_scenario, data))
                runs["base"].append(n / await fastavro_kafka_baseline(bootstrap, dicts, parsed))
    return [
        (label, statistics.median(runs[key]), runs[key])
        for key, label in (
            ("avro", "engine, AvroConverter"),
            ("json", "engine, JsonConverter (schemas)"),
            ("base", "raw aiokafka + fastavro schemaless"),
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--pipeline-records", type=int, default=50_000)
    parser.add_argument("--no-pipeline", action="store_true", help="the converter comparison only")
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    n = args.records
    rows: list[tuple[str, float, list[float]]] = []
    structs, dicts = records(n)
    with tempfile.TemporaryDirectory(prefix="bench-registry-") as work:
        registry = start_registry(Path(work))
        try:
            writer, reader = AvroConverter(), AvroConverter()
            writer.configure({"schema.registry.url": registry.url}, False)
            reader.configure({"schema.registry.url": registry.url}, False)
            topic = "bench-orders"
            framed = [writer.from_connect_data(topic, SCHEMA, s) for s in structs]  # warm: registers once
            reader.to_connect_data(topic, framed[0])  # warm: fetches once
            assert writer.settings is not None
            assert framed[0] is not None
            parsed = fastavro.parse_schema(
                json.loads(writer.settings.client.by_id(int.from_bytes(framed[0][1:5], "big")).schema)
            )
            payloads = []
            for d in dicts:
                out = io.BytesIO()
                fastavro.schemaless_writer(out, parsed, d)
                payloads.append(out.getvalue())

            def conv_write(block: slice) -> None:
                for s in structs[block]:
                    writer.from_connect_data(topic, SCHEMA, s)

            def conv_read(block: slice) -> None:
                for b in framed[block]:
                    reader.to_connect_data(topic, b)

            def base_write(block: slice) -> None:
                for d in dicts[block]:
                    out = io.BytesIO()
                    fastavro.schemaless_writer(out, parsed, d)
                    out.getvalue()

            def base_read(block: slice) -> None:
                for p in payloads[block]:
                    fastavro.schemaless_reader(io.BytesIO(p), parsed, None)

            timings = alternating_blocks(
                n,
                BLOCK,
                ROUNDS,
                {
                    "conv_w": lambda block: [
                        writer.from_connect_data(topic, SCHEMA, s) for s in structs[block]
                    ],
                    "base_w": base_write,
                    "conv_r": conv_read,
                    "base_r": base_read,
                },
            )
            load = os.getloadavg()[0]
            requests = writer.settings.client.requests
            if not args.no_pipeline:
                from bench.data_plane import quiet

                quiet()
                rows = asyncio.run(pipeline(args.pipeline_records, registry.url))
        finally:
            registry.stop()
    med = {k: rate(n, statistics.median(v)) for k, v in timings.items()}
    command = " ".join(["python bench/avro_converter.py", *sys.argv[1:]])
    text = (
        f"\n## Avro converter vs bare fastavro (`{command}`)\n\n"
        f"{platform.python_implementation()} {platform.python_version()}, fastavro {fastavro.__version__}; "
        f"{n:,} records of 10 fields, median of {ROUNDS} rounds (alternating blocks of {BLOCK}); "
        f"load average {load:.1f} on {os.cpu_count()} CPUs while timing; "
        "registry round trips made by the writer: "
        f"{requests} (Apicurio Registry started {registry.started_in_s:.1f} s).\n\n"
        "| path | AvroConverter records/s | fastavro schemaless records/s | ratio |\n|---|---:|---:|---:|\n"
        f"| write (Struct -> framed bytes vs dict -> bytes) | {med['conv_w']:,.0f} | {med['base_w']:,.0f} | "
        f"{med['conv_w'] / med['base_w']:.2f}x |\n"
        f"| read (framed bytes -> Struct vs bytes -> dict) | {med['conv_r']:,.0f} | {med['base_r']:,.0f} | "
        f"{med['conv_r'] / med['base_r']:.2f}x |\n"
    )
    if rows:
        base = rows[-1][1]
        text += (
            f"\nThe data plane with Avro on Apache Kafka 4.1 (one node), {args.pipeline_records:,} records of "
            "`bench.Customer` (4 fields), source -> topic -> sink, median of 3:\n\n"
            "| run | records/s | vs baseline | runs |\n|---|---:|---:|---|\n"
        )
        text += "".join(
            f"| {label} | {rate_:,.0f} | {rate_ / base:.2f}x | {', '.join(f'{r:,.0f}' for r in runs)} |\n"
            for label, rate_, runs in rows
        )
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
