"""AvroConverter against bare fastavro: records/s writing and reading the same records, same run.

Converter: ``from_connect_data(topic, schema, Struct)`` (Connect value -> Avro value, fastavro
schemaless write, Confluent framing) and ``to_connect_data(topic, bytes)`` (unframe, fastavro
schemaless read, Avro value -> Struct), after its one registry round trip per schema (made
before the clock starts, against a real Apicurio Registry started here). Baseline: fastavro's
``schemaless_writer``/``schemaless_reader`` on the same Avro schema (the one the converter
registered) with plain dicts, into/out of a ``BytesIO`` per record: what a hand-written
pipeline without Connect's data model does. The record: 10 fields (ints, strings, an optional
string, a double, a boolean, a Decimal, a Timestamp, a string map). Median of 5 rounds, converter
and baseline alternating.

    python bench/avro_converter.py [--records N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import io
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fastavro

from bench.report import append_to
from engine.converters.registry.avro import AvroConverter
from engine.data.builder import SchemaBuilder
from engine.data.logical import Decimal, Timestamp
from engine.data.schema import Schema
from engine.data.values import Struct
from tests.schema_registry import start_registry

SCHEMA = (SchemaBuilder.struct().name("bench.Order")
          .field("id", Schema.INT64_SCHEMA).field("customer", Schema.STRING_SCHEMA)
          .field("qty", Schema.INT32_SCHEMA).field("note", Schema.OPTIONAL_STRING_SCHEMA)
          .field("price", Schema.FLOAT64_SCHEMA).field("paid", Schema.BOOLEAN_SCHEMA)
          .field("amount", Decimal.schema(2)).field("at", Timestamp.schema())
          .field("sku", Schema.STRING_SCHEMA)
          .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
          .build())
ROUNDS = 5


def records(n: int) -> tuple[list[Struct], list[dict[str, Any]]]:
    structs, dicts = [], []
    at = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    for i in range(n):
        plain = {"id": i, "customer": f"customer-{i % 97}", "qty": i % 13, "note": None if i % 3 else "gift",
                 "price": i * 0.5, "paid": bool(i % 2), "amount": decimal.Decimal(i).scaleb(-2),
                 "at": at + dt.timedelta(seconds=i), "sku": f"SKU-{i:08d}", "attrs": {"color": "red", "size": "M"}}
        struct = Struct(SCHEMA)
        for key, value in plain.items():
            struct.put(key, value)
        structs.append(struct)
        dicts.append(plain)
    return structs, dicts


def rate(n: int, seconds: float) -> float:
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    n = args.records
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
            parsed = fastavro.parse_schema(json.loads(writer.settings.client.by_id(
                int.from_bytes(framed[0][1:5], "big")).schema))
            payloads = []
            for d in dicts:
                out = io.BytesIO()
                fastavro.schemaless_writer(out, parsed, d)
                payloads.append(out.getvalue())
            timings: dict[str, list[float]] = {k: [] for k in ("conv_w", "base_w", "conv_r", "base_r")}
            for _ in range(ROUNDS):
                t = time.perf_counter()
                for s in structs:
                    writer.from_connect_data(topic, SCHEMA, s)
                timings["conv_w"].append(time.perf_counter() - t)
                t = time.perf_counter()
                for d in dicts:
                    out = io.BytesIO()
                    fastavro.schemaless_writer(out, parsed, d)
                    out.getvalue()
                timings["base_w"].append(time.perf_counter() - t)
                t = time.perf_counter()
                for b in framed:
                    reader.to_connect_data(topic, b)
                timings["conv_r"].append(time.perf_counter() - t)
                t = time.perf_counter()
                for p in payloads:
                    fastavro.schemaless_reader(io.BytesIO(p), parsed, None)
                timings["base_r"].append(time.perf_counter() - t)
            requests = writer.settings.client.requests
        finally:
            registry.stop()
    med = {k: rate(n, statistics.median(v)) for k, v in timings.items()}
    text = (f"\n## Avro converter vs bare fastavro (`python bench/avro_converter.py --records {n}`)\n\n"
            f"{platform.python_implementation()} {platform.python_version()}, fastavro {fastavro.__version__}; "
            f"{n:,} records of 10 fields, median of {ROUNDS} rounds; registry round trips made by the writer: "
            f"{requests} (Apicurio Registry started {registry.started_in_s:.1f} s).\n\n"
            "| path | AvroConverter records/s | fastavro schemaless records/s | ratio |\n|---|---:|---:|---:|\n"
            f"| write (Struct -> framed bytes vs dict -> bytes) | {med['conv_w']:,.0f} | {med['base_w']:,.0f} | "
            f"{med['conv_w'] / med['base_w']:.2f}x |\n"
            f"| read (framed bytes -> Struct vs bytes -> dict) | {med['conv_r']:,.0f} | {med['base_r']:,.0f} | "
            f"{med['conv_r'] / med['base_r']:.2f}x |\n")
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
