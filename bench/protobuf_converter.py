"""ProtobufConverter against bare protobuf: records/s writing and reading the same records, same run.

Converter: ``from_connect_data(topic, schema, Struct)`` (Connect value -> message, ``SerializeToString``,
Confluent framing with the message-index byte) and ``to_connect_data(topic, bytes)`` (unframe,
``FromString``, message -> Struct), after its one registry round trip per schema (made before the
clock starts, against a real Apicurio Registry started here). Baseline: the same dynamic message
class (the converter's, from the schema it registered): ``cls(**fields).SerializeToString()`` from a
plain dict, and ``cls.FromString(payload)`` with each field read off the message into a dict: what a
hand-written pipeline without Connect's data model does. The record: 8 fields (ints, strings, an
optional string, a double, a boolean, a string map); no Decimal or Timestamp, whose messages a
hand-written baseline would build differently. Median of 5 rounds; within a round converter and
baseline alternate in blocks of 500 records, so load from other processes falls on both.

    python bench/protobuf_converter.py [--records N] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import google.protobuf  # type: ignore[import-untyped]

from bench.report import alternating_blocks, append_to
from engine.converters.registry.protobuf import ProtobufConverter
from engine.data.builder import SchemaBuilder
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
    .field("sku", Schema.STRING_SCHEMA)
    .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .build()
)
ROUNDS = 5
BLOCK = 500


def records(n: int) -> tuple[list[Struct], list[dict[str, Any]]]:
    structs, dicts = [], []
    for i in range(n):
        plain: dict[str, Any] = {
            "id": i,
            "customer": f"customer-{i % 97}",
            "qty": i % 13,
            "note": None if i % 3 else "gift",
            "price": i * 0.5,
            "paid": bool(i % 2),
            "sku": f"SKU-{i:08d}",
            "attrs": {"color": "red", "size": "M"},
        }
        struct = Struct(SCHEMA)
        for key, value in plain.items():
            struct.put(key, value)
        structs.append(struct)
        dicts.append({k: v for k, v in plain.items() if v is not None})
    return structs, dicts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    n = args.records
    structs, dicts = records(n)
    names = [f.name for f in SCHEMA.fields]
    with tempfile.TemporaryDirectory(prefix="bench-registry-") as work:
        registry = start_registry(Path(work))
        try:
            writer, reader = ProtobufConverter(), ProtobufConverter()
            writer.configure({"schema.registry.url": registry.url}, False)
            reader.configure({"schema.registry.url": registry.url}, False)
            topic = "bench-orders"
            framed = [writer.from_connect_data(topic, SCHEMA, s) for s in structs]  # warm: registers once
            reader.to_connect_data(topic, framed[0])  # warm: fetches once
            data = writer._mapping()
            cls = data.message_class(data.file_for(SCHEMA)[1])
            payloads = [cls(**d).SerializeToString() for d in dicts]
            assert framed[0] is not None
            assert framed[0][6:] == payloads[0]  # the same bytes, after the header and index

            def conv_write(block: slice) -> None:
                for s in structs[block]:
                    writer.from_connect_data(topic, SCHEMA, s)

            def conv_read(block: slice) -> None:
                for b in framed[block]:
                    reader.to_connect_data(topic, b)

            def base_write(block: slice) -> None:
                for d in dicts[block]:
                    cls(**d).SerializeToString()

            def base_read(block: slice) -> None:
                for p in payloads[block]:
                    m = cls.FromString(p)
                    {name: getattr(m, name) for name in names}

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
        finally:
            registry.stop()
    med = {k: n / statistics.median(v) for k, v in timings.items()}
    command = " ".join(["python bench/protobuf_converter.py", *sys.argv[1:]])
    backend = google.protobuf.internal.api_implementation.Type()
    text = (
        f"\n## Protobuf converter vs bare protobuf (`{command}`)\n\n"
        f"{platform.python_implementation()} {platform.python_version()}, protobuf "
        f"{google.protobuf.__version__} ({backend}); {n:,} records of 8 fields, median of {ROUNDS} rounds "
        f"(alternating blocks of {BLOCK}); load average {load:.1f} on {os.cpu_count()} CPUs while timing.\n\n"
        "| path | ProtobufConverter records/s | bare protobuf records/s | ratio |\n|---|---:|---:|---:|\n"
        f"| write (Struct -> framed bytes vs dict -> message -> bytes) | {med['conv_w']:,.0f} | "
        f"{med['base_w']:,.0f} | {med['conv_w'] / med['base_w']:.2f}x |\n"
        f"| read (framed bytes -> Struct vs bytes -> message -> dict) | {med['conv_r']:,.0f} | "
        f"{med['base_r']:,.0f} | {med['conv_r'] / med['base_r']:.2f}x |\n"
    )
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
