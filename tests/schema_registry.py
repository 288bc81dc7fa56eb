"""A real schema registry for the test session: Apicurio Registry (Apache-2.0) from Maven Central,
in memory on a free 127.0.0.1 port, reached through its Confluent-compatible API
(``/apis/ccompat/v7``). Started at most once per session, on first use of ``schema_registry_url``,
and stopped by process group at its end. One that cannot be fetched or started FAILS the test
that needs it (never a skip): the converters' tests mean nothing against a stand-in.

Fetching: ``mvn dependency:get`` of ``io.apicurio:apicurio-registry-app:<v>:tar.gz:all`` (the
published Quarkus application, a ``-runner.jar`` and its ``lib/``; ~115 MB, once into ~/.m2),
unpacked under ``$XDG_CACHE_HOME/connect-engine``. 3.0.9 is the newest release whose classes
run on Java 17 (3.3.x is compiled for Java 21); its parent POM is not on Maven Central, so
``-Dtransitive=false`` (the tarball needs nothing else).

Registered as a pytest plugin by ``tests/conftest.py``; ``bench/avro_converter.py`` uses
:func:`start_registry` directly.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

APICURIO_VERSION = "3.0.9"
ARTIFACT = f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
START_TIMEOUT_S = 180.0
CCOMPAT = "/apis/ccompat/v7"
QUICK_JVM = ["-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData"]
# In memory (H2 in-process, Apicurio's default), loopback only, quiet: warnings and errors only.
QUARKUS_PROPS = {
    "quarkus.http.host": "127.0.0.1",
    "quarkus.log.level": "WARN",
    'quarkus.log.category."io.apicurio".level': "WARN",
    "quarkus.http.access-log.enabled": "false",
    "quarkus.banner.enabled": "false",
    "quarkus.log.console.color": "false",
}


class RegistryUnavailable(RuntimeError):
    """The registry could not be fetched or started (the test needing it fails with this)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "connect-engine" / f"apicurio-registry-{APICURIO_VERSION}"


def _m2_tarball() -> Path:
    repo = Path.home() / ".m2" / "repository" / "io" / "apicurio" / "apicurio-registry-app" / APICURIO_VERSION
    return repo / f"apicurio-registry-app-{APICURIO_VERSION}-all.tar.gz"


def install() -> Path:
    """The unpacked application directory, fetching it through Maven on first use."""
    home = _cache_dir()
    runner = home / f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"
    if runner.exists():
        return runner
    tarball = _m2_tarball()
    if not tarball.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise RegistryUnavailable("mvn is not on PATH: cannot fetch Apicurio Registry from Maven Central")
        done = subprocess.run(
            [mvn, "-q", "-B", f"{DEPENDENCY_PLUGIN}:get", f"-Dartifact={ARTIFACT}", "-Dtransitive=false"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if done.returncode != 0 or not tarball.exists():
            raise RegistryUnavailable(
                f"mvn dependency:get {ARTIFACT} failed ({done.returncode}):\n"
                f"{(done.stdout + done.stderr)[-3000:]}"
            )
    partial = home.with_name(home.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(partial, filter="data")
    with contextlib.suppress(OSError):
        partial.rename(home)  # another session may have won the race: theirs is as good
    shutil.rmtree(partial, ignore_errors=True)
    if not runner.exists():
        raise RegistryUnavailable(f"{tarball} holds no {runner.name}")
    return runner


@dataclass
class Registry:
    """A running registry: ``url`` is the Confluent-compatible base URL clients take."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path
    started_in_s: float

    def stop(self) -> None:
        """SIGTERM the process group (the JVM leads it), then SIGKILL."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/subjects", timeout=2) as response:
            return response.status == 200 and isinstance(json.loads(response.read()), list)
    except (OSError, urllib.error.URLError, ValueError):
        return False


def start_registry(work: Path) -> Registry:
    """Start one registry in memory on a free port; ready once ``GET /subjects`` answers."""
    runner = install()
    java = shutil.which("java")
    if java is None:
        raise RegistryUnavailable("java is not on PATH")
    port = free_port()
    work.mkdir(parents=True, exist_ok=True)
    log = work / "apicurio-registry.log"
    props = [f"-D{k}={v}" for k, v in {**QUARKUS_PROPS, "quarkus.http.port": str(port)}.items()]
    began = time.monotonic()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [java, *QUICK_JVM, *props, "-jar", str(runner)],
            cwd=runner.parent,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    registry = Registry(f"http://127.0.0.1:{port}{CCOMPAT}", process, log, 0.0)
    try:
        deadline = began + START_TIMEOUT_S
        while not _ready(registry.url):
            if process.poll() is not None:
                raise RegistryUnavailable(
                    f"Apicurio Registry exited with {process.returncode}:\n{registry.tail()}"
                )
            if time.monotonic() > deadline:
                raise RegistryUnavailable(
                    f"Apicurio Registry did not answer within {START_TIMEOUT_S} s:\n{registry.tail()}"
                )
            time.sleep(0.2)
    except BaseException:
        registry.stop()
        raise
    registry.started_in_s = time.monotonic() - began
    return registry


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """The session's registry (started on first use; a failure to start fails the test)."""
    registry = start_registry(tmp_path_factory.mktemp("schema-registry"))
    try:
        yield registry
    finally:
        registry.stop()


@pytest.fixture(scope="session")
def schema_registry_url(schema_registry: Registry) -> str:
    return schema_registry.url
