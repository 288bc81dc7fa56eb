"""A real schema registry for the test session: Apicurio Registry (Apache-2.0) from Maven Central,
in memory on a free 127.0.0.1 port, reached through its Confluent-compatible API
(``/apis/ccompat/v7``). Started at most once per session, on first use of ``schema_registry_url``,
and stopped by process group at its end. One that cannot be fetched or started FAILS the test
that needs it (never a skip): the converters' tests mean nothing against a stand-in.

Fetching: the published Quarkus application (``io.apicurio:apicurio-registry-app:<v>:tar.gz:all``,
a ``-runner.jar`` and its ``lib/``; ~105 MB) is downloaded once straight from Maven Central over
HTTPS, checked against the ``.sha1`` Central publishes beside it, and unpacked under
``$XDG_CACHE_HOME/connect-engine``. Not through ``mvn dependency:get``: Maven reads the artifact's
descriptor first, and its parent ``io.apicurio:apicurio-registry:pom:3.0.9`` is not served, so a
machine with an empty ``~/.m2`` could not fetch a tarball that is itself served. 3.0.9 is the newest
release whose classes run on Java 17 (3.3.x is compiled for Java 21). ``python -m
tests.schema_registry`` fetches it (CI does, before the tests) and says in one line what failed.

Registered as a pytest plugin by ``tests/conftest.py``; ``bench/avro_converter.py`` uses
:func:`start_registry` directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import urllib.response
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

APICURIO_VERSION = "3.0.9"
ARTIFACT = f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all"
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"
TARBALL = f"apicurio-registry-app-{APICURIO_VERSION}-all.tar.gz"
TARBALL_URL = f"{MAVEN_CENTRAL}/io/apicurio/apicurio-registry-app/{APICURIO_VERSION}/{TARBALL}"
DOWNLOAD_TIMEOUT_S = 60.0  # per read: a stalled connection fails, a slow one does not
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


def _get(url: str) -> urllib.response.addinfourl:
    """An open response for ``url``, or a one-line :class:`RegistryUnavailable` naming what failed."""
    try:
        return urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)  # type: ignore[no-any-return]
    except urllib.error.HTTPError as exc:
        raise RegistryUnavailable(f"{ARTIFACT} is not served: {url} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RegistryUnavailable(f"cannot reach {MAVEN_CENTRAL} for {ARTIFACT}: {reason}") from None


def _download(target: Path) -> None:
    """Stream the tarball to ``target``, checked against Maven Central's published SHA-1."""
    with _get(TARBALL_URL + ".sha1") as response:
        expected = response.read().decode("ascii", "replace").split()[0].strip().lower()
    digest = hashlib.sha1(usedforsecurity=False)
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    try:
        with _get(TARBALL_URL) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise RegistryUnavailable(
                f"{TARBALL_URL} arrived with SHA-1 {digest.hexdigest()}, Maven Central publishes {expected}"
            )
        partial.rename(target)
    except OSError as exc:
        raise RegistryUnavailable(f"downloading {TARBALL_URL} failed: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)


def install() -> Path:
    """The unpacked application's runner jar, downloading and unpacking it on first use."""
    home = _cache_dir()
    runner = home / f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"
    if runner.exists():
        return runner
    home.parent.mkdir(parents=True, exist_ok=True)
    tarball = home.parent / TARBALL
    if not tarball.exists():
        _download(tarball)
    partial = home.with_name(home.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(tarball) as archive:
            archive.extractall(partial, filter="data")
    except (tarfile.TarError, OSError) as exc:
        tarball.unlink(missing_ok=True)  # a damaged download is fetched again next time
        shutil.rmtree(partial, ignore_errors=True)
        raise RegistryUnavailable(f"cannot unpack {tarball}: {exc}") from None
    with contextlib.suppress(OSError):
        partial.rename(home)  # another session may have won the race: theirs is as good
    shutil.rmtree(partial, ignore_errors=True)
    if not runner.exists():
        raise RegistryUnavailable(f"{tarball} holds no {runner.name}")
    tarball.unlink(missing_ok=True)  # unpacked: the 105 MB archive is no longer needed
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


def main() -> int:
    """Fetch and unpack the registry (CI's step before the tests); a failure is one line on stderr."""
    try:
        runner = install()
    except RegistryUnavailable as exc:
        sys.stderr.write(f"schema registry: {exc}\n")
        return 1
    sys.stdout.write(f"schema registry: Apicurio Registry {APICURIO_VERSION} at {runner.parent}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
