"""``python -m engine.testing.kafka`` (``make kafka``): start Apache Kafka here and print how to reach it.

Runs until Ctrl-C (or SIGTERM), then stops the nodes and removes their data (``--dir`` keeps it).
``--resolve`` only fetches the jars of each ``--version`` given and exits (CI does it before the tests);
what could not be fetched is said in one line.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from engine.testing.kafka.classpath import (
    DEFAULT_VERSION,
    VERSIONS,
    KafkaUnavailable,
    full_version,
    kafka_classpath,
)
from engine.testing.kafka.cluster import apache_kafka


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.testing.kafka",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="append",
        help=f"Kafka release line or full version (default {DEFAULT_VERSION}; "
        f"known lines: {', '.join(VERSIONS)}); repeat it with --resolve",
    )
    parser.add_argument(
        "--resolve", action="store_true", help="only fetch the jars of each --version, then exit"
    )
    parser.add_argument(
        "--nodes", type=int, default=1, help="KRaft combined nodes (default 1; 3 for replication)"
    )
    parser.add_argument("--dir", type=Path, default=None, help="keep the nodes' data and logs here")
    args = parser.parse_args(argv)
    versions: list[str] = args.version or [DEFAULT_VERSION]
    if args.resolve:
        return _resolve(versions)
    if len(versions) > 1:
        parser.error("one --version at a time, but with --resolve")
    version = versions[0]
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    _say(
        f"starting Apache Kafka {full_version(version)} ({args.nodes} node(s)); the first "
        "start of a version downloads its jars ..."
    )
    try:
        with apache_kafka(version, nodes=args.nodes, directory=args.dir) as kafka:
            tls = kafka.client_settings("SSL")
            _say(f"""Apache Kafka {kafka.version} is up ({kafka.started_in_s:.1f} s); Ctrl-C stops it.
  PLAINTEXT       bootstrap.servers={kafka.bootstrap_servers()}
  SSL             bootstrap.servers={kafka.bootstrap_servers("SSL")}  ssl.truststore.type=PEM ssl.truststore.location={tls["ssl.truststore.location"]}
  SASL_PLAINTEXT  bootstrap.servers={kafka.bootstrap_servers("SASL_PLAINTEXT")}  (PLAIN, SCRAM-SHA-256/512)
  SASL_SSL        bootstrap.servers={kafka.bootstrap_servers("SASL_SSL")}
  users           {", ".join(f"{u}/{p}" for u, p in kafka.users.items())}
  try the demo:   connect-engine pipeline --bootstrap-servers {kafka.bootstrap_servers()}""")
            stop.wait()
            _say("stopping Apache Kafka ...")
    except KafkaUnavailable as exc:
        sys.stderr.write(f"python -m engine.testing.kafka: {exc}\n")
        return 1
    return 0


def _resolve(versions: list[str]) -> int:
    for version in versions:
        try:
            jars = len(kafka_classpath(version).split(os.pathsep))
        except KafkaUnavailable as exc:
            sys.stderr.write(f"python -m engine.testing.kafka: {exc}\n")
            return 1
        _say(f"Apache Kafka {full_version(version)}: {jars} jars resolved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
