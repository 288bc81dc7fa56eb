"""The Java Kafka Connect runtime, standalone or distributed, from the same Maven classpath as the broker
(``engine.testing.kafka``).

For comparing the engine with the runtime users come from: the same REST calls to both (the
differential suite), moving a cluster from one to the other on shared internal topics
(``test_migration.py``), and benchmarks (``bench/java_connect.py``). Our own instrument, not shipped. ``with java_connect(bootstrap) as connect:`` starts
``org.apache.kafka.connect.cli.ConnectDistributed`` (or ``ConnectStandalone``) on a free port of
127.0.0.1, waits until ``GET /health`` answers 200, and stops it afterwards. Its process is
``java ... ConnectDistributed worker.properties`` itself, in its own process group, so
:meth:`JavaConnect.kill` is a real kill -9. Connect's FileStream connectors (``connect-file``),
``JsonConverter`` and the SMTs are on the classpath.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engine.testing.kafka.classpath import (
    CONNECT_FILE_VERSIONS,
    DEFAULT_VERSION,
    KafkaUnavailable,
    cache_dir,
    full_version,
    kafka_classpath,
)
from engine.testing.kafka.jvm import kill_jvm, last_output, start_jvm, stop_jvm
from engine.testing.kafka.node import HOST, free_port, write_properties

Mode = Literal["standalone", "distributed"]
START_TIMEOUT_S = 120.0
# A small, quick-starting JVM (C1 only): right for REST and lifecycle tests, slow for moving data.
# Benchmarks pass their own, e.g. ("-Xms1g", "-Xmx1g", "-XX:+UseG1GC").
QUICK_JVM = (
    "-Xms64m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
)
MAIN_CLASS: Mapping[str, str] = {
    "standalone": "org.apache.kafka.connect.cli.ConnectStandalone",
    "distributed": "org.apache.kafka.connect.cli.ConnectDistributed",
}
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
_RESOURCES = Path(__file__).parent


@dataclass(frozen=True)
class Response:
    """One HTTP answer: status, headers (lower-case names) and body (text; ``json`` parsed, else None)."""

    status: int
    headers: Mapping[str, str]
    text: str

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.text) if self.text else None
        except ValueError:
            return None


def rest_call(
    url: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    raw: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 120.0,
) -> Response:
    """One REST call to any Connect-style worker at ``url`` (``http://host:port``), synchronously.

    ``body`` is sent as JSON (``Content-Type: application/json``); ``raw`` sends bytes as they are
    (with only the ``headers`` given), for malformed bodies and media types.
    """
    host, _, port = url.removeprefix("http://").rstrip("/").partition(":")
    sent = dict(headers or {})
    payload: bytes | None = None
    if raw is not None:
        payload = raw.encode() if isinstance(raw, str) else raw
    elif body is not None:
        payload = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    sent.setdefault("Accept", "application/json")
    connection = http.client.HTTPConnection(host, int(port or 80), timeout=timeout)
    try:
        connection.request(method, path, body=payload, headers=sent)
        answer = connection.getresponse()
        text = answer.read().decode("utf-8", "replace")
        return Response(answer.status, {k.lower(): v for k, v in answer.getheaders()}, text)
    finally:
        connection.close()


def connect_classpath(version: str) -> str:
    """Kafka's classpath for Java Connect ``version``; where an older ``connect-file`` stands in (4.4.0:
    Maven Central serves none), with ``compat/AppInfoParser.java`` compiled beside it: 4.4 moved
    ``AppInfoParser``, which the older FileStream connectors' ``version()`` calls."""
    classpath = kafka_classpath(version)
    resolved = full_version(version)
    if resolved not in CONNECT_FILE_VERSIONS:
        return classpath
    compat = cache_dir() / resolved / "compat"
    compiled = compat / "org" / "apache" / "kafka" / "common" / "utils" / "AppInfoParser.class"
    if not compiled.is_file():
        javac = shutil.which("javac")
        if javac is None:
            raise KafkaUnavailable(
                "javac is not on PATH: install a JDK 17+ (Debian: openjdk-17-jdk-headless)"
            )
        done = subprocess.run(
            [
                javac,
                "-nowarn",
                "-cp",
                classpath,
                "-d",
                str(compat),
                str(_RESOURCES / "compat" / "AppInfoParser.java"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise KafkaUnavailable(f"javac could not compile the AppInfoParser shim: {done.stderr.strip()}")
    return f"{classpath}{os.pathsep}{compat}"


@dataclass
class JavaConnect:
    """One Java Connect worker process; :meth:`start` again after :meth:`stop` or :meth:`kill` keeps its
    port, properties and (standalone) offsets file."""

    mode: Mode
    version: str
    classpath: str
    directory: Path
    port: int
    properties: dict[str, str]
    connector_files: tuple[Path, ...] = ()
    jvm_options: tuple[str, ...] = QUICK_JVM
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    started_in_s: float = 0.0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def worker_id(self) -> str:
        """As Connect names it: the advertised host and port."""
        return f"{HOST}:{self.port}"

    @property
    def properties_file(self) -> Path:
        return self.directory / "worker.properties"

    @property
    def log_file(self) -> Path:
        return self.directory / "connect.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def request(self, method: str, path: str, body: Any = None, **options: Any) -> Response:
        """:func:`rest_call` to this worker."""
        return rest_call(self.url, method, path, body, **options)

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the worker and wait until ``GET /health`` answers 200 (its herder is ready)."""
        if self.running:
            return
        began = time.monotonic()
        write_properties(self.properties_file, self.properties)
        self.process = start_jvm(
            classpath=self.classpath,
            version=self.version,
            main_class=MAIN_CLASS[self.mode],
            args=[str(self.properties_file), *map(str, self.connector_files)],
            jvm_options=self.jvm_options,
            directory=self.directory,
            log4j2=_RESOURCES / "connect-log4j2.properties",
            log4j=_RESOURCES / "connect-log4j.properties",
        )
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.kill()
            raise
        self.started_in_s = time.monotonic() - began

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if not self.running:
                code = None if self.process is None else self.process.returncode
                raise KafkaUnavailable(
                    f"Java Connect ({self.mode}) exited with code {code} before it was ready:\n{self.tail()}"
                )
            with contextlib.suppress(OSError, http.client.HTTPException):
                if self.request("GET", "/health", timeout=5).status == 200:
                    return
            if time.monotonic() > deadline:
                raise KafkaUnavailable(
                    f"Java Connect ({self.mode}) was not ready on {self.url} within {timeout:g} s:"
                    f"\n{self.tail()}"
                )
            time.sleep(0.2)

    def kill(self) -> None:
        """kill -9 of the process group: no task is stopped, no offset flushed, the group is not left."""
        kill_jvm(self.process)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (Connect's shutdown hook: tasks stopped, offsets flushed, group left), then a kill."""
        stop_jvm(self.process, timeout)

    def tail(self, lines: int = 30) -> str:
        return last_output(self.directory, self.log_file, lines)


def worker_properties(
    mode: Mode,
    bootstrap_servers: str,
    port: int,
    directory: Path,
    *,
    group_id: str | None = None,
    topics: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A worker's ``worker.properties``: Connect's defaults except what a throw-away worker must set.

    Distributed: ``group.id`` and the three storage topics (``connect-<tag>-configs`` etc. unless
    ``topics`` names them), replication factor -1 (the broker's default). Standalone: an offsets file
    in ``directory``. Both: JSON converters, the listener, and ``plugin.discovery=service_load``
    (KIP-898, 3.6+: Connect's own plugins all have service manifests; scanning would add seconds).
    """
    props = {
        "bootstrap.servers": bootstrap_servers,
        "listeners": f"http://{HOST}:{port}",
        "rest.advertised.host.name": HOST,
        "rest.advertised.port": str(port),
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        "plugin.discovery": "service_load",
    }
    if mode == "distributed":
        tag = uuid.uuid4().hex[:8]
        names = dict(topics or {})
        props |= {
            "group.id": group_id or f"java-connect-{tag}",
            "config.storage.topic": names.get("config.storage.topic", f"java-connect-{tag}-configs"),
            "offset.storage.topic": names.get("offset.storage.topic", f"java-connect-{tag}-offsets"),
            "status.storage.topic": names.get("status.storage.topic", f"java-connect-{tag}-status"),
            "config.storage.replication.factor": "-1",
            "offset.storage.replication.factor": "-1",
            "status.storage.replication.factor": "-1",
        }
    else:
        props["offset.storage.file.filename"] = str(directory / "connect.offsets")
    return props


def start_java_connect(
    bootstrap_servers: str,
    *,
    mode: Mode = "distributed",
    version: str = DEFAULT_VERSION,
    group_id: str | None = None,
    topics: Mapping[str, str] | None = None,
    worker_config: Mapping[str, str] | None = None,
    connectors: Sequence[Mapping[str, str]] = (),
    port: int | None = None,
    jvm_options: Sequence[str] = QUICK_JVM,
    directory: Path | None = None,
    timeout: float = START_TIMEOUT_S,
) -> JavaConnect:
    """Start a Java Connect worker of Apache Kafka ``version`` (``4.1``, ``3.9`` or a full version).

    ``worker_config`` overrides or adds any worker property; ``connectors`` (standalone) are written
    as connector ``.properties`` files and passed on the command line, as ``connect-standalone.sh``
    takes them. The caller stops it (:meth:`JavaConnect.stop`); :func:`java_connect` does that for you.
    """
    classpath = connect_classpath(version)
    work = directory or Path(tempfile.mkdtemp(prefix=f"java-connect-{mode}-"))
    work.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    props = worker_properties(mode, bootstrap_servers, port, work, group_id=group_id, topics=topics)
    props.update(worker_config or {})
    files: list[Path] = []
    for i, connector in enumerate(connectors):
        path = work / f"connector-{i}.properties"
        write_properties(path, connector)
        files.append(path)
    worker = JavaConnect(
        mode, full_version(version), classpath, work, port, props, tuple(files), tuple(jvm_options)
    )
    worker.start(timeout)
    return worker


@contextlib.contextmanager
def java_connect(
    bootstrap_servers: str,
    *,
    mode: Mode = "distributed",
    version: str = DEFAULT_VERSION,
    group_id: str | None = None,
    topics: Mapping[str, str] | None = None,
    worker_config: Mapping[str, str] | None = None,
    connectors: Sequence[Mapping[str, str]] = (),
    jvm_options: Sequence[str] = QUICK_JVM,
    directory: Path | None = None,
) -> Iterator[JavaConnect]:
    """:func:`start_java_connect`, stopped (SIGTERM) afterwards and its files removed unless ``directory``."""
    work = directory or Path(tempfile.mkdtemp(prefix=f"java-connect-{mode}-"))
    worker: JavaConnect | None = None
    try:
        worker = start_java_connect(
            bootstrap_servers,
            mode=mode,
            version=version,
            group_id=group_id,
            topics=topics,
            worker_config=worker_config,
            connectors=connectors,
            jvm_options=jvm_options,
            directory=work,
        )
        yield worker
    finally:
        if worker is not None:
            worker.stop()
        if directory is None:
            shutil.rmtree(work, ignore_errors=True)
