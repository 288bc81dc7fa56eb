"""``connect-engine``: the command line. Parses arguments and hands over; no logic lives here."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from importlib.metadata import version

from engine.cli.startup_errors import one_line
from engine.config.worker_keys import help_epilog
from engine.observability.logs import configure_logging


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="connect-engine", description="Run Kafka Connect-style connectors.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('connect-engine')}")
    parser.add_argument(
        "--log-level",
        default=None,
        help="structlog level (default INFO for the standalone and distributed workers, as Connect's; "
        "WARNING for the other commands)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    pipeline = commands.add_parser(
        "pipeline",
        help="the demo pipeline (make run): SQLite audit rows -> topics -> Spark -> Parquet, with REST",
    )
    pipeline.add_argument("--dir", default="demo-pipeline", help="where the database, topics and Parquet go")
    pipeline.add_argument("--port", type=int, default=8083, help="REST port on 127.0.0.1 (default 8083)")
    pipeline.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    pipeline.add_argument(
        "--reset",
        action="store_true",
        help="start afresh: first remove what earlier runs left in --dir (database, topics, "
        "offsets, configs, Parquet; nothing else)",
    )
    where = pipeline.add_mutually_exclusive_group()
    where.add_argument(
        "--spark-master",
        metavar="URL",
        help="run the sink's Spark jobs on this master, e.g. spark://host:7077 (default local[2]); "
        "the driver stays in this process",
    )
    where.add_argument(
        "--spark-remote",
        metavar="sc://HOST:PORT",
        help="run them on a Spark Connect server instead (the driver runs there; --dir must be a "
        "path the server can write)",
    )
    pipeline.add_argument(
        "--spark-conf",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="a Spark setting for the worker's session (worker property spark.conf.KEY); repeatable",
    )
    pipeline.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT",
        help="keep the topics on this Kafka cluster (e.g. `make kafka`'s) instead of the "
        "embedded topic file in --dir; --reset leaves them there",
    )
    commands.add_parser(
        "demo", help="create, pause, resume, stop and delete a connector, printing each transition"
    )
    standalone = commands.add_parser(
        "standalone",
        help="run a worker with Connect's REST API (like connect-standalone)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a standalone worker: the embedded engine plus Kafka Connect's REST API.",
        epilog=help_epilog(distributed=False)
        + """

connector files: .properties (with name=...) or JSON {"name": ..., "config": {...}}; each is
created, or updated if it exists, at start. SIGINT/SIGTERM stop connectors and tasks with a
plain stop(); shutting down never runs the deletion callbacks.""",
    )
    standalone.add_argument(
        "files", nargs="*", metavar="FILE", help="[WORKER_PROPERTIES] [CONNECTOR_FILE ...]"
    )
    distributed = commands.add_parser(
        "distributed",
        help="run a worker that shares connectors with others through Kafka (like connect-distributed)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a distributed worker: workers with the same group.id form a cluster through the "
        "broker's group coordinator and share connectors and tasks; REST works on any of them.",
        epilog=help_epilog(distributed=True)
        + """

SIGINT/SIGTERM stop this worker's connectors and tasks with a plain stop() and leave the group;
the other workers take the work over. Deleting a connector runs deleted() on its owner.""",
    )
    distributed.add_argument("worker_properties", metavar="WORKER_PROPERTIES")
    internal_topics = commands.add_parser(
        "internal-topics",
        help="create a cluster's config, status and offsets topics (like connect-internal-topics.sh)",
        description="Manage internal topics required by Kafka Connect clusters (config, status, and offset "
        "topics). For workers with internal.topics.automatic.creation.enable=false (KIP-1209).",
    )
    internal_commands = internal_topics.add_subparsers(dest="subcommand", required=True)
    create_topics = internal_commands.add_parser(
        "create",
        help="Create internal topics required for Kafka Connect operation using the provided worker "
        "configuration.",
    )
    create_topics.add_argument(
        "--worker-config",
        required=True,
        metavar="FILE",
        help="Path to a Connect worker configuration file. This file must define the internal topic names "
        "and connection information for the Kafka cluster.",
    )
    diagram = commands.add_parser(
        "diagram",
        help="print a lifecycle machine as Mermaid (from its transition table), or render it",
        description="Print the connector or task lifecycle as a Mermaid state diagram, generated from the "
        "declared transition table; --svg/--png render it with Graphviz (needs `dot`).",
    )
    diagram.add_argument("kind", nargs="?", choices=["connector", "task"], default="connector")
    output = diagram.add_mutually_exclusive_group()
    output.add_argument("--svg", metavar="FILE", help="write an SVG with Graphviz")
    output.add_argument("--png", metavar="FILE", help="write a PNG with Graphviz")
    output.add_argument("--dot", action="store_true", help="print Graphviz DOT instead of Mermaid")
    replay = commands.add_parser(
        "replay",
        help="run scenario files (or replay a config topic dump) and print the transition trace",
        description="Run each scenario against a fresh engine and print its transition trace and a PASS/FAIL "
        "line; exit 1 if any expectation failed, 2 if a file is malformed.",
    )
    replay.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="scenario YAML files, or builtin:NAME for a shipped one (NAME may be a glob)",
    )
    replay.add_argument(
        "--list",
        action="store_true",
        dest="list_builtin",
        help="list the scenarios shipped with the package and exit",
    )
    replay.add_argument(
        "--log",
        choices=["memory", "file", "kafka"],
        default="memory",
        help="config log the engine runs on (default memory)",
    )
    replay.add_argument("--bootstrap-servers", help="Kafka brokers for --log kafka")
    replay.add_argument("--format", choices=["text", "json"], default="text", dest="output")
    replay.add_argument(
        "--seed",
        type=_seed,
        metavar="N",
        help="cluster scenarios: the seed of the interleavings (default: the file's 'seed', else 0)",
    )
    replay.add_argument(
        "--explore",
        type=_positive,
        metavar="N",
        help="cluster scenarios: try N seeds (from --seed, else 0) and report the first that fails",
    )
    replay.add_argument(
        "--processes",
        action="store_true",
        help="run cluster scenarios on real worker processes and the broker at --bootstrap-servers",
    )
    replay.add_argument(
        "--timeline",
        metavar="FILE.svg",
        help="also draw each scenario's transitions per connector/task over time as SVG "
        "(several scenarios: FILE-<n>.svg); a name not ending in .svg is refused",
    )
    replay.add_argument(
        "--config-topic-dump",
        metavar="DUMP",
        help="replay a Kafka Connect config topic dump (JSON lines of key and value) instead "
        "and print the connectors, target states and task configs it leaves",
    )
    replay.add_argument(
        "--dry-run",
        action="store_true",
        help="with --config-topic-dump: apply the records without starting any connector",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; a start-up error it can explain is one line on stderr and exit 1
    (``engine.cli.startup_errors``), never a traceback."""
    parser = _parser()
    args = parser.parse_args(argv)
    worker = args.command in ("standalone", "distributed")
    configure_logging(args.log_level or ("INFO" if worker else "WARNING"))
    try:
        return _run(args, parser)
    except BrokenPipeError:  # the reader left (``replay --list | head``): nothing more to say to it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's own final flush fails quietly too
        return 1
    except Exception as exc:
        line = one_line(exc, worker=worker)
        if line is None:
            raise
        sys.stderr.write(f"connect-engine {args.command}: {line}\n")
        return 1


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "pipeline":
        from engine.cli.demo_pipeline import main as run_pipeline
        from engine.cli.demo_pipeline import spark_properties

        try:
            spark_props = spark_properties(args.spark_master, args.spark_remote, args.spark_conf)
        except ValueError as exc:
            parser.error(str(exc))
        return run_pipeline(
            args.dir,
            args.port,
            args.duration,
            fresh=args.reset,
            spark_props=spark_props,
            bootstrap_servers=args.bootstrap_servers,
        )
    if args.command == "demo":
        from engine.cli.demo import run_demo

        asyncio.run(run_demo())
        return 0
    if args.command == "replay":
        return _replay(args, parser)
    if args.command == "diagram":
        return _diagram(args)
    if args.command == "internal-topics":
        from engine.cli.internal_topics import run

        return run(args.subcommand, args.worker_config)
    if args.command in ("distributed", "standalone"):
        return _worker(args)
    return 0


def _worker(args: argparse.Namespace) -> int:
    """Run a worker; a configuration it cannot start with, or a Kafka cluster it cannot reach or log in to,
    is one line naming the cause and the setting (``main``), exit 1: nothing in a traceback helps an operator."""
    if args.command == "distributed":
        from engine.cli.distributed import run_distributed

        asyncio.run(run_distributed(args.worker_properties))
    else:
        from engine.cli.standalone import run_standalone, split_files

        worker_file, connector_files = split_files(args.files)
        asyncio.run(run_standalone(worker_file, connector_files))
    return 0


def _diagram(args: argparse.Namespace) -> int:
    from engine.diagram import GraphvizMissing, dot, mermaid, render

    if args.svg or args.png:
        try:
            render(args.kind, args.svg or args.png, "svg" if args.svg else "png")
        except GraphvizMissing as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        return 0
    sys.stdout.write(dot(args.kind) if args.dot else mermaid(args.kind))
    return 0


def _replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from engine.scenario.replay import replay

    if args.config_topic_dump:
        if args.files:
            parser.error("--config-topic-dump replays a dump, not scenario FILEs: give one or the other")
        from engine.cli.replay_dump import replay_dump

        return asyncio.run(replay_dump(args.config_topic_dump, args.dry_run, args.output))
    if args.list_builtin:
        from engine.scenario.builtin import builtin_scenarios

        for scenario in builtin_scenarios():
            print(f"builtin:{scenario.name}  {scenario.title}")
        return 0
    if args.dry_run:
        parser.error("--dry-run only applies to --config-topic-dump")
    if args.log == "kafka" and not args.bootstrap_servers:
        parser.error("--log kafka needs --bootstrap-servers")
    if args.processes and not args.bootstrap_servers:
        parser.error("--processes needs --bootstrap-servers (the broker the workers' group runs on)")
    if args.processes and (args.seed is not None or args.explore is not None):
        parser.error("--seed and --explore order the deterministic in-process cluster, not --processes")
    if not args.files:
        parser.error("replay needs scenario FILEs")
    from engine.scenario.builtin import resolve
    from engine.scenario.model import ScenarioError

    try:
        paths = [path for argument in args.files for path in resolve(argument)]
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(
        replay(
            paths,
            args.log,
            args.bootstrap_servers,
            args.output,
            timeline=args.timeline,
            seed=args.seed,
            explore_runs=args.explore,
            processes=args.processes,
        )
    )


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is a non-negative integer, got {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of seeds (1 or more), got {text}")
    return value
