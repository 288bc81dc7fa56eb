"""``connect-engine replay --config-topic-dump DUMP [--dry-run]``."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from engine.scenario.dump import DumpError, print_dump, read_dump, start_dump, terminal_progress

EXIT_BAD_DUMP = 2


async def replay_dump(
    path: str, dry_run: bool, output: str, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        replay = read_dump(path, terminal_progress(err))
    except DumpError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_BAD_DUMP
    if not dry_run:
        await start_dump(replay)
    if output == "json":
        json.dump(replay.as_json(), out, indent=2)
        out.write("\n")
    else:
        print_dump(replay, out)
    return 0
