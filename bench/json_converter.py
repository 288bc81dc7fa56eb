"""JsonConverter with schemas (the default): records/s through ``from_connect_data`` and ``to_connect_data``.

Two record shapes: ``struct6``, a Struct of 6 fields (string, int32, int64, boolean, float64, optional
string: every third record null), and ``line``, the FileStream case, a STRING schema with a 60-byte
line (what ``connect-file`` moves). ``to_connect_data`` reads the bytes ``from_connect_data`` wrote.
Records are built before the clock starts; one converter per direction, warmed by one record.

``--against DIR`` times another checkout (e.g. ``main`` in a second git worktree) in the same run:
each round runs one process on that tree and one on this one, alternating, and the table gives the
median (and best) records/s of each and their ratio. The processes also hash every byte they wrote:
the table says whether both trees wrote the same bytes.

    python bench/json_converter.py [--records N] [--rounds N] [--against DIR] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPS = (
    "struct6 from_connect_data",
    "struct6 to_connect_data",
    "line from_connect_data",
    "line to_connect_data",
)
LINE = "2026-11-27 12:00:00 INFO worker-1 task-3 committed offsets 42"  # 60 bytes, as a log line


def measure(tree: Path, n: int) -> dict[str, Any]:
    """Records/s of each op (best of 3 passes) and the SHA-256 of what was written, with ``tree``'s engine."""
    sys.path.insert(0, str(tree))
    from engine.converters.json_converter import JsonConverter
    from engine.data import Schema, SchemaBuilder, Struct

    schema = (
        SchemaBuilder.struct()
        .name("bench.Event")
        .field("name", Schema.STRING_SCHEMA)
        .field("count", Schema.INT32_SCHEMA)
        .field("id", Schema.INT64_SCHEMA)
        .field("active", Schema.BOOLEAN_SCHEMA)
        .field("score", Schema.FLOAT64_SCHEMA)
        .field("note", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    structs = [
        Struct(schema)
        .put("name", f"customer-{i % 997}")
        .put("count", i % 1000)
        .put("id", 1_700_000_000_000 + i)
        .put("active", i % 2 == 0)
        .put("score", i * 0.25 + 0.5)
        .put("note", None if i % 3 == 0 else f"note {i}")
        for i in range(n)
    ]
    lines = [f"{LINE[:-6]}{i:06d}" for i in range(n)]
    shapes = {"struct6": (schema, structs), "line": (Schema.STRING_SCHEMA, lines)}
    rates: dict[str, float] = {}
    digest = hashlib.sha256()
    for shape, (value_schema, values) in shapes.items():
        writer, reader = JsonConverter(), JsonConverter()
        writer.configure({}, False)
        reader.configure({}, False)
        reader.to_connect_data("t", writer.from_connect_data("t", value_schema, values[0]))
        written: list[bytes] = []
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            written = [writer.from_connect_data("t", value_schema, v) for v in values]  # type: ignore[misc]
            best = min(best, time.perf_counter() - started)
        rates[f"{shape} from_connect_data"] = n / best
        for data in written:
            digest.update(data)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            read = [reader.to_connect_data("t", data) for data in written]
            best = min(best, time.perf_counter() - started)
        rates[f"{shape} to_connect_data"] = n / best
        if read[-1].value != values[-1]:
            raise AssertionError(f"{shape}: read back {read[-1].value!r}")
    return {"rates": rates, "sha256": digest.hexdigest()}


def run_tree(tree: Path, n: int) -> dict[str, Any]:
    """``measure`` in a fresh process, so neither tree's modules or warmed caches touch the other's."""
    out = subprocess.run(
        [sys.executable, __file__, "--measure", str(tree), "--records", str(n)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", metavar="DIR", help="another checkout to time in the same run")
    parser.add_argument("--measure", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--append", metavar="FILE")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.records)))
        return
    trees = {"this": ROOT} | ({"against": Path(args.against).resolve()} if args.against else {})
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
    for _ in range(args.rounds):
        for key, tree in reversed(trees.items()):  # the other tree first in each round
            runs[key].append(run_tree(tree, args.records))

    def stats(key: str, op: str) -> tuple[float, float]:
        values = [r["rates"][op] for r in runs[key]]
        return statistics.median(values), max(values)

    command = " ".join(["python bench/json_converter.py", *sys.argv[1:]])
    text = (
        f"\n## JsonConverter with schemas, per record (`{command}`)\n\n"
        f"{platform.python_implementation()} {platform.python_version()}; {args.records:,} records, "
        f"{args.rounds} rounds (a process per tree per round, alternating; best of 3 passes in each); "
        "records/s, median (best).\n\n"
    )
    if args.against:
        same = {r["sha256"] for rs in runs.values() for r in rs}
        text += (
            f"Against: `{args.against}`. Bytes written: {'identical' if len(same) == 1 else 'DIFFERENT'}.\n\n"
            "| op | against | this | ratio (median) |\n|---|---:|---:|---:|\n"
        )
        for op in OPS:
            (bm, bb), (am, ab) = stats("against", op), stats("this", op)
            text += f"| {op} | {bm:,.0f} ({bb:,.0f}) | {am:,.0f} ({ab:,.0f}) | {am / bm:.2f}x |\n"
    else:
        text += "| op | records/s |\n|---|---:|\n"
        for op in OPS:
            med, best = stats("this", op)
            text += f"| {op} | {med:,.0f} ({best:,.0f}) |\n"
    print(text)
    if args.append:
        sys.path.insert(0, str(ROOT))
        from bench.report import append_to

        append_to(args.append, text)


if __name__ == "__main__":
    main()
