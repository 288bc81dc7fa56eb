"""An embedded engine writes nothing to stdout or stderr until the host program configures logging.

Each case is a fresh interpreter (structlog's configuration is process-wide), running what an
embedder writes: create, pause, resume, delete, then shut down.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LIFECYCLE = """
import asyncio
{setup}
from engine import Engine

async def main() -> None:
    async with Engine() as engine:
        await engine.create_connector("orders", {{"connector.class": "RecordingSource", "tasks.max": "2"}})
        await engine.pause_connector("orders")
        await engine.wait_for_state("orders", "PAUSED", tasks=2)
        await engine.resume_connector("orders")
        await engine.wait_for_state("orders", "RUNNING", tasks=2)
        await engine.delete_connector("orders")
    print("host output")

asyncio.run(main())
"""


def run(setup: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LIFECYCLE.format(setup=setup)], capture_output=True, text=True,
                          check=True, cwd=ROOT, timeout=60)


def test_an_unconfigured_host_sees_only_its_own_output() -> None:
    done = run("")
    assert done.stdout == "host output\n"
    assert done.stderr == ""


def test_stdlib_logging_configured_by_the_host_shows_the_engine_events() -> None:
    done = run("import logging, sys\nlogging.basicConfig(level=logging.INFO, stream=sys.stderr, "
               "format='%(name)s %(levelname)s %(message)s')")
    assert done.stdout == "host output\n"
    lines = [line for line in done.stderr.splitlines() if line.startswith("engine.")]
    deleted = [line for line in lines if "event=connector.deleted_ran" in line]
    assert deleted, done.stderr
    assert deleted[0].startswith("engine.herder INFO ")  # engine.<component>, as /admin/loggers names it
    assert "connector=orders" in deleted[0]  # bound context travels along


def test_the_hosts_own_structlog_configuration_wins() -> None:
    done = run("import structlog\nstructlog.configure(processors=[structlog.processors.JSONRenderer()], "
               "logger_factory=structlog.PrintLoggerFactory())")
    lines = done.stdout.splitlines()
    assert lines[-1] == "host output"
    assert any('"event": "connector.deleted_ran"' in line for line in lines[:-1]), lines
