"""One JVM of Apache Kafka's classpath (a broker here, Java Connect in the differential tests), started,
stopped and killed the same way.

The process is ``java <options> <logging> -Dkafka.logs.dir=<dir> -cp <classpath> <main class> <args>``
itself (no wrapper script), in its own process group, with its stdout and stderr appended to
``stdout.log`` in its directory: a kill is a real kill -9, and what it printed outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from engine.testing.kafka.classpath import java, major


def start_jvm(
    *,
    classpath: str,
    version: str,
    main_class: str,
    args: Sequence[str],
    jvm_options: Sequence[str],
    directory: Path,
    log4j2: Path,
    log4j: Path,
) -> subprocess.Popen[bytes]:
    """Start ``main_class`` in ``directory``; Kafka 4 logs through log4j2 (``log4j2``), 3.x through log4j 1."""
    logging = (
        f"-Dlog4j2.configurationFile={log4j2}"
        if major(version) >= 4
        else f"-Dlog4j.configuration=file:{log4j}"
    )
    argv = [
        java(),
        *jvm_options,
        logging,
        f"-Dkafka.logs.dir={directory}",
        "-cp",
        classpath,
        main_class,
        *args,
    ]
    with (directory / "stdout.log").open("ab") as out:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=directory,
            start_new_session=True,
        )


def kill_jvm(process: subprocess.Popen[bytes] | None) -> None:
    """kill -9 of the process group, if it still runs: no shutdown hook, nothing flushed."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def stop_jvm(process: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """SIGTERM to the process group (the JVM's shutdown hooks run), then a kill after ``timeout``."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        kill_jvm(process)


def last_output(directory: Path, log_file: Path, lines: int) -> str:
    """The last ``lines`` of what the JVM printed and of its log file, for a failure's message."""
    text: list[str] = []
    for path in (directory / "stdout.log", log_file):
        with contextlib.suppress(OSError):
            text.extend(path.read_text(errors="replace").splitlines()[-lines:])
    return "\n".join(text) or "(no output)"
