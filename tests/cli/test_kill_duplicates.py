"""kill -9 a standalone worker moving lines FileStream -> in-process topic -> FileStream, again and again:
nothing is lost, and what is delivered twice stays within what one commit interval carries.

At-least-once may repeat, per kill, the records the sink delivered since its last commit and the
records the source produced since its last offset commit: with ``offset.flush.interval.ms`` = 1 s
at 500 lines/s that is at most 2 x 500 lines per kill (it was 28-66 % of everything before).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.brokers import free_port

pytestmark = pytest.mark.integration  # workers killed with -9 over and over

RATE = 500  # lines per second
INTERVAL_S = 1.0
KILLS = 4
RUN_S = 6.0


def _worker(directory: Path, round_: int) -> subprocess.Popen[bytes]:
    files = [directory / name for name in ("worker.properties", "source.json", "sink.json")]
    with (directory / f"worker-{round_}.log").open("wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen([sys.executable, "-m", "engine.cli", "standalone", *map(str, files)],
                                stdout=subprocess.DEVNULL, stderr=log)


@pytest.mark.timeout(180)
def test_kill_9_loses_nothing_and_repeats_at_most_a_commit_interval_per_kill(tmp_path: Path) -> None:
    (tmp_path / "worker.properties").write_text(
        f"listeners=http://127.0.0.1:{free_port()}\n"
        + "".join(f"{kind}.storage.file.filename={tmp_path / kind}.log\n" for kind in ("config", "offset", "status"))
        + f"topics.storage.file.filename={tmp_path / 'topics.log'}\noffset.flush.interval.ms={int(INTERVAL_S * 1000)}\n")
    source, out = tmp_path / "in.txt", tmp_path / "out.txt"
    (tmp_path / "source.json").write_text(json.dumps({"name": "reader", "config": {
        "connector.class": "FileStreamSource", "file": str(source), "topic": "lines"}}))
    (tmp_path / "sink.json").write_text(json.dumps({"name": "writer", "config": {
        "connector.class": "FileStreamSink", "file": str(out), "topics": "lines"}}))
    written = 0
    stop = threading.Event()

    def write() -> None:
        nonlocal written
        with source.open("a") as f:
            while not stop.is_set():
                f.write("".join(f"line-{written + n}\n" for n in range(RATE // 10)))
                f.flush()
                written += RATE // 10
                time.sleep(0.1)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for round_ in range(KILLS):
            worker = _worker(tmp_path, round_)
            time.sleep(RUN_S)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
    finally:
        stop.set()
        writer.join()
    final = _worker(tmp_path, KILLS)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(set(out.read_text().splitlines())) < written:
            time.sleep(0.5)
    finally:
        final.send_signal(signal.SIGTERM)
        final.wait(timeout=30)
    delivered = Counter(out.read_text().splitlines())
    assert len(delivered) == written  # nothing lost
    repeated = sum(count - 1 for count in delivered.values())
    assert repeated <= KILLS * 2 * RATE * INTERVAL_S, (repeated, written)
