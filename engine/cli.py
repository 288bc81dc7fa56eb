"""``connect-engine``: the command line. Parses arguments and hands over; no logic lives here."""

from __future__ import annotations

import argparse
import asyncio
from importlib.metadata import version

from engine.log import configure_logging


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="connect-engine", description="Run Kafka Connect-style connectors.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('connect-engine')}")
    parser.add_argument("--log-level", default="WARNING", help="structlog level (default WARNING)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="create, pause, resume, stop and delete a connector, printing each transition")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging(args.log_level)
    if args.command == "demo":
        from engine.demo import run_demo

        asyncio.run(run_demo())
    return 0
