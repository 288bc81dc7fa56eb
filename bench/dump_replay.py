"""Config topic dump replay, --dry-run: records per second (target >= 100,000).

Baseline, measured in the same run: parsing every line alone (``orjson.loads``, what the replay
uses), the floor any replay pays.

    python bench/dump_replay.py [--records N] [--append BENCHMARKS.md]   (`make bench` appends)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import orjson

from bench.report import append_to
from engine.scenario.dump import read_dump


def write_dump(path: Path, records: int) -> None:
    """A realistic mix: per connector a config, 3 task configs, a commit and a target state; some churn."""
    with path.open("w") as out:
        written, n = 0, 0
        while written < records:
            name = f"connector-{n}"
            props = {
                "connector.class": "io.example.SourceConnector",
                "tasks.max": "3",
                "name": name,
                "topic.prefix": f"db-{n}",
                "connection.url": f"jdbc:postgresql://db{n}:5432/app",
                "poll.interval.ms": "1000",
                "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            }
            lines = [{"key": f"connector-{name}", "value": {"properties": props}}]
            lines += [
                {"key": f"task-{name}-{t}", "value": {"properties": {**props, "task.id": str(t)}}}
                for t in range(3)
            ]
            lines.append({"key": f"commit-{name}", "value": {"tasks": 3}})
            lines.append(
                {"key": f"target-state-{name}", "value": {"state": "STARTED", "state.v2": "STARTED"}}
            )
            if n % 10 == 9:
                lines.append({"key": f"connector-{name}", "value": None})
            for line in lines:
                out.write(json.dumps(line) + "\n")
            written += len(lines)
            n += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dump.jsonl"
        write_dump(path, args.records)
        began = time.perf_counter()
        with path.open("rb") as f:
            for line in f:
                orjson.loads(line)
        baseline = time.perf_counter() - began
        replay = read_dump(str(path))
    rate = replay.records / replay.seconds
    result = {
        "records": replay.records,
        "replay_s": round(replay.seconds, 3),
        "records_per_s": round(rate),
        "parse_only_s": round(baseline, 3),
        "ratio_vs_parse_only": round(replay.seconds / baseline, 2),
        "connectors": len(replay.snapshot.connectors),
        "target_records_per_s": 100_000,
        "met": rate >= 100_000,
    }
    print(json.dumps(result))
    append_to(args.append, _markdown(result))


def _markdown(r: dict[str, float]) -> str:
    return (
        "\n## Config topic dump replay, `--dry-run` (`python bench/dump_replay.py`)\n\n"
        "A generated dump (per connector: config, 3 task configs, commit, target state; every tenth "
        "connector tombstoned). Baseline, same run: parsing every line alone with `orjson.loads`.\n\n"
        "| records | replay s | records/s (target >= 100,000) | parse-only s | replay / parse-only |\n"
        "|---|---|---|---|---|\n"
        f"| {r['records']} | {r['replay_s']} | {r['records_per_s']} | {r['parse_only_s']} | "
        f"{r['ratio_vs_parse_only']} |\n"
    )


if __name__ == "__main__":
    main()
