"""Soak helper: memory, disk and start-up of file-backed in-process topics under retention.

``feed()`` sends N records to one topic of a file-backed ``MemoryTopics`` while a group member
follows and commits after every batch (what a sink does), then times a fresh process opening the
same files. It needs no engine, so a soak benchmark can call it with its own numbers. Alone it
prints one JSON line:

    python bench/topic_retention.py [--records N] [--value-bytes B] [--retention-bytes B] [--segment-bytes B]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import structlog  # noqa: E402

from engine.topics import MemoryTopics, TopicPartition  # noqa: E402

BATCH = 1000
TOPIC = "soak"


@dataclass(frozen=True, slots=True)
class Result:
    records: int
    send_per_s: float
    rss_mib: float  # resident memory once fed
    peak_rss_mib: float  # the feeding process's peak
    held: int  # records in memory once fed
    journal_bytes: int
    segment_bytes: int  # every segment file together
    segment_files: int
    open_s: float  # a fresh process opening the files
    open_rss_mib: float  # its resident memory once open


def _status_mib(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, from Linux's /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def feed(
    workdir: Path,
    records: int,
    *,
    value_bytes: int = 100,
    retention_bytes: int = -1,
    segment_bytes: int = 16 * 1024 * 1024,
) -> Result:
    path = workdir / "topics.jsonl"
    topics = MemoryTopics(path, retention_check_interval_ms=0)
    await topics.open()
    await topics.create_topic(
        TOPIC, configs={"retention.bytes": str(retention_bytes), "segment.bytes": str(segment_bytes)}
    )
    producer, tp = topics.producer(), TopicPartition(TOPIC, 0)
    consumer = await topics.consumer("soak-sink", [TOPIC])
    value = b"x" * value_bytes
    started = time.perf_counter()
    for sent in range(0, records, BATCH):
        for _ in range(min(BATCH, records - sent)):
            await producer.send(TOPIC, None, value)
        while await consumer.getmany(timeout_ms=0, max_records=BATCH):
            pass
        await consumer.commit({tp: await consumer.position(tp)})
    elapsed = time.perf_counter() - started
    await topics.maintain()
    held = topics.partition_log(tp).held()
    rss, peak = _status_mib("VmRSS"), _status_mib("VmHWM")
    await topics.close()
    journal, segments, files = _disk(path)
    opened = await _open_elsewhere(path)
    return Result(
        records=records,
        send_per_s=round(records / elapsed),
        rss_mib=round(rss, 1),
        peak_rss_mib=round(peak, 1),
        held=held,
        journal_bytes=journal,
        segment_bytes=segments,
        segment_files=files,
        open_s=opened["open_s"],
        open_rss_mib=opened["rss_mib"],
    )


def _disk(path: Path) -> tuple[int, int, int]:
    """The journal's size, the segment files' total size and their count."""
    segments = list(Path(f"{path}.segments").rglob("*.jsonl"))
    return path.stat().st_size, sum(p.stat().st_size for p in segments), len(segments)


async def _open_elsewhere(path: Path) -> dict[str, float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--open", str(path), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    return dict(json.loads(out.decode().strip().splitlines()[-1]))


async def _open(path: Path) -> None:
    topics = MemoryTopics(path, retention_check_interval_ms=0)
    started = time.perf_counter()
    await topics.open()
    elapsed = time.perf_counter() - started
    print(json.dumps({"open_s": round(elapsed, 3), "rss_mib": round(_status_mib("VmRSS"), 1)}))
    await topics.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--retention-bytes", type=int, default=-1)
    parser.add_argument("--segment-bytes", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--open", type=Path, help=argparse.SUPPRESS)  # the fresh process of _open_elsewhere
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.open is not None:
        asyncio.run(_open(args.open))
        return
    with tempfile.TemporaryDirectory() as workdir:
        result = asyncio.run(
            feed(
                Path(workdir),
                args.records,
                value_bytes=args.value_bytes,
                retention_bytes=args.retention_bytes,
                segment_bytes=args.segment_bytes,
            )
        )
    print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
