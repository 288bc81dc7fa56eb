"""A worker process that dies inside ``deleted()``, for the tests of deletion recovery."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

KILLED_EXIT_CODE = 9  # what test.exit.<callback> exits with

# Runs in a child process so that os._exit inside deleted() kills a whole worker, not the test.
KILLED_DURING_DELETION = textwrap.dedent("""
    import asyncio, json, sys
    from engine import Engine

    async def main(worker, config):
        async with Engine(worker) as engine:
            await engine.create_connector("doomed", config)
            await engine.wait_for_state("doomed", "RUNNING", tasks=2)
            await engine.delete_connector("doomed")  # deleted() exits the process

    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2])))
    sys.exit("deletion returned: the process should have been killed in deleted()")
""")


def calls_in(record: Path) -> list[tuple[str, str]]:
    lines = record.read_text().splitlines() if record.exists() else []
    return [(call["unit"], call["method"]) for call in map(json.loads, lines)]


async def delete_in_a_worker_killed_inside_deleted(worker: dict[str, str], config: dict[str, str]) -> None:
    """Create connector ``doomed`` in a child worker and delete it; ``config`` must make deleted() exit."""
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", KILLED_DURING_DELETION, json.dumps(worker), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == KILLED_EXIT_CODE, child.stderr
