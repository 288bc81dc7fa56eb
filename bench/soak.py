"""Soak benchmark: a standalone worker on the embedded defaults moving lines at a fixed rate, for minutes.

A FileStream source fed ``--rate`` lines/s writes an in-process topic (file-backed) that a
FileStream sink drains; config, status and offsets are file-backed too. Every ``--every``
seconds it samples the worker's RSS and the size of each file it keeps, then it restarts the
worker and times how long until both connectors are RUNNING again. The baseline is the same
run's first sample after the retention window (``topics.retention.ms``) has passed: a flat
worker keeps the later samples within 10 % of it.

    python bench/soak.py --minutes 2 --append BENCHMARKS.md     (the short form `make bench` runs)
    python bench/soak.py --minutes 60 --rate 500 --retention-s 300   (the long form, by hand)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.report import append_to

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _size_mib(path: Path) -> float:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def _status(port: int, name: str) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/connectors/{name}/status", timeout=1) as answer:
            return str(json.load(answer)["connector"]["state"])
    except (OSError, ValueError, KeyError):
        return None


class Soak:
    def __init__(self, directory: Path, rate: int, retention_s: int) -> None:
        self.directory, self.rate, self.port = directory, rate, _free_port()
        stores = "".join(
            f"{kind}.storage.file.filename={directory / kind}.log\n"
            for kind in ("config", "offset", "status")
        )
        (directory / "worker.properties").write_text(
            f"listeners=http://127.0.0.1:{self.port}\n{stores}"
            f"topics.storage.file.filename={directory / 'topics.log'}\n"
            # 1 MiB segments: retention drops whole segments, so a short run needs them to roll
            f"topics.retention.ms={retention_s * 1000}\ntopics.segment.bytes=1048576\n"
            "offset.flush.interval.ms=1000\n"
        )
        (directory / "source.json").write_text(
            json.dumps(
                {
                    "name": "reader",
                    "config": {
                        "connector.class": "FileStreamSource",
                        "file": str(directory / "in.txt"),
                        "topic": "lines",
                    },
                }
            )
        )
        (directory / "sink.json").write_text(
            json.dumps(
                {
                    "name": "writer",
                    "config": {
                        "connector.class": "FileStreamSink",
                        "file": str(directory / "out.txt"),
                        "topics": "lines",
                    },
                }
            )
        )
        self.written = 0
        self._stop = threading.Event()

    def start_worker(self) -> subprocess.Popen[bytes]:
        files = [self.directory / f for f in ("worker.properties", "source.json", "sink.json")]
        return subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "standalone", *map(str, files)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )

    def feed(self) -> None:
        """Lines at ``rate`` per second; the sink's output is truncated now and then (it is not under test)."""
        with (self.directory / "in.txt").open("a") as f:
            while not self._stop.is_set():
                f.write("".join(f"line-{self.written + n:012d}\n" for n in range(self.rate // 10)))
                f.flush()
                self.written += self.rate // 10
                time.sleep(0.1)

    def files(self) -> dict[str, float]:
        sizes = {name: _size_mib(self.directory / f"{name}.log") for name in ("config", "offset", "status")}
        topics = self.directory / "topics.log"
        sizes["topics"] = _size_mib(topics) + _size_mib(topics.with_name(topics.name + ".segments"))
        return sizes

    def restart_seconds(self, worker: subprocess.Popen[bytes]) -> float:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
        began = time.monotonic()
        again = self.start_worker()
        try:
            while not (_status(self.port, "reader") == _status(self.port, "writer") == "RUNNING"):
                time.sleep(0.02)
            return time.monotonic() - began
        finally:
            again.send_signal(signal.SIGTERM)
            again.wait(timeout=60)

    def run(self, minutes: float, every_s: float) -> dict[str, Any]:
        feeder = threading.Thread(target=self.feed)
        feeder.start()
        worker = self.start_worker()
        samples: list[dict[str, Any]] = []
        try:
            began = time.monotonic()
            while time.monotonic() - began < minutes * 60:
                time.sleep(every_s)
                samples.append(
                    {
                        "t_s": round(time.monotonic() - began),
                        "rss_mib": round(_rss_mib(worker.pid), 1),
                        "records": self.written,
                        **{k: round(v, 2) for k, v in self.files().items()},
                    }
                )
                print(json.dumps(samples[-1]), file=sys.stderr, flush=True)
        finally:
            self._stop.set()
            feeder.join()
        restart = self.restart_seconds(worker)
        return {"samples": samples, "restart_s": restart, "written": self.written}


def _flatness(samples: list[dict[str, Any]], retention_s: int, key: str) -> float | None:
    """Peak of the later half over the peak of the earlier half, once the retention window has passed
    (1.00 = flat; a sawtooth of segments dropped whole counts by its peaks, not its phase)."""
    after = [s for s in samples if s["t_s"] >= retention_s * 1.5]
    half = len(after) // 2
    if half < 1 or not max(s[key] for s in after[:half]):
        return None
    return max(float(s[key]) for s in after[half:]) / max(float(s[key]) for s in after[:half])


def markdown(result: dict[str, Any], args: argparse.Namespace) -> str:
    samples = result["samples"]
    rows = "\n".join(
        f"| {s['t_s']} | {s['records']:,} | {s['rss_mib']} | {s['topics']} | {s['offset']} | "
        f"{s['status']} | {s['config']} |"
        for s in samples
    )
    verdicts = []
    for key, label in (("rss_mib", "RSS"), ("topics", "topics on disk"), ("offset", "offsets file")):
        ratio = _flatness(samples, args.retention_s, key)
        verdicts.append(f"{label} {'n/a' if ratio is None else f'{ratio:.2f}x'}")
    return f"""
## Soak: a week-long worker, compressed (`bench/soak.py`)

Command: `python bench/soak.py --minutes {args.minutes:g} --rate {args.rate} --retention-s {args.retention_s} --append BENCHMARKS.md`
(CPython {platform.python_version()}, {os.cpu_count()} cores, run {time.strftime("%Y-%m-%d")}). A standalone worker on the
embedded defaults (file-backed config, status, offsets and in-process topics), FileStream source at {args.rate} lines/s
into a FileStream sink, `topics.retention.ms` = {args.retention_s} s, `topics.segment.bytes` = 1 MiB. Baseline: the same run's samples once
1.5 retention windows have passed: the peak of their later half over the peak of their earlier half; target
within 10 % (at most 1.10x), restart to RUNNING within 2 s.

| t (s) | records | RSS (MiB) | topics (MiB) | offsets (MiB) | status (MiB) | config (MiB) |
|---|---|---|---|---|---|---|
{rows}

Flatness after the retention window (peak of the later half / peak of the earlier half): {", ".join(verdicts)}. Restart to RUNNING after
{result["written"]:,} records of history: **{result["restart_s"]:.2f} s** (target 2 s).
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--rate", type=int, default=500, help="lines per second")
    parser.add_argument("--retention-s", type=int, default=30, help="topics.retention.ms, in seconds")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--append", help="append a markdown section to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-") as directory:
        result = Soak(Path(directory), args.rate, args.retention_s).run(args.minutes, args.every)
    text = markdown(result, args)
    print(text)
    append_to(args.append, text)


if __name__ == "__main__":
    main()
