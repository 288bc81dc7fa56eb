"""Apache Kafka's runtime classpath, resolved by Maven from Maven Central and cached.

The jars come from the ``pom.xml`` beside this module (the broker, the tools, the Connect runtime
with ``connect-file``, ``connect-json`` and ``connect-transforms``, and a log4j binding); Maven
keeps them in its local repository and the classpath file is kept under the user's cache
directory, so only the first call for a version needs the network (about 5 s here).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

POM = Path(__file__).with_name("pom.xml")
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
# The release of each supported line that the pom resolves; a full version is taken as given.
VERSIONS = {"4.4": "4.4.0", "4.1": "4.1.2", "3.9": "3.9.1"}
DEFAULT_VERSION = "4.1"
# Maven Central does not serve connect-file (the FileStream connectors) of every release: the newest
# served one stands in (a plain Connector plugin, loaded by any 4.x runtime)
CONNECT_FILE_VERSIONS = {"4.4.0": "4.1.2"}


class KafkaUnavailable(RuntimeError):
    """Java, Maven or a Kafka artifact is missing, or a node would not start: a failure, never a skip."""


def full_version(version: str) -> str:
    """``4.1`` -> ``4.1.2``; a three-part version is returned unchanged."""
    return VERSIONS.get(version, version)


def major(version: str) -> int:
    return int(full_version(version).split(".", 1)[0])


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "connect-engine" / "kafka"


def kafka_classpath(version: str = DEFAULT_VERSION) -> str:
    """The runtime classpath of Apache Kafka ``version`` (broker and Connect), resolving it on first use."""
    resolved = full_version(version)
    target = cache_dir() / resolved / "classpath.txt"
    if target.is_file():
        classpath = target.read_text(encoding="utf-8").strip()
        if classpath and all(Path(jar).is_file() for jar in classpath.split(os.pathsep)):
            return classpath
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable("Maven (mvn) is not on PATH: install it (Debian: maven) to run Apache Kafka")
    target.parent.mkdir(parents=True, exist_ok=True)
    profile = "kafka-3.9" if major(resolved) < 4 else "kafka-4"
    argv = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(POM),
        f"-P{profile}",
        f"-Dkafka.version={resolved}",
        f"-Dconnect.file.version={CONNECT_FILE_VERSIONS.get(resolved, resolved)}",
        f"{MAVEN_DEPENDENCY_PLUGIN}:build-classpath",
        f"-Dmdep.outputFile={target}",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.is_file():
        log = target.with_name("resolve.log")
        log.write_text(done.stdout + done.stderr, encoding="utf-8")
        raise KafkaUnavailable(
            f"Maven could not resolve Apache Kafka {resolved}: {maven_failure(done.stdout + done.stderr)} "
            f"(Maven's output: {log})"
        )
    return target.read_text(encoding="utf-8").strip()


def maven_failure(output: str) -> str:
    """The one line of Maven's output that says why a resolution failed (a missing artifact, most often)."""
    errors = [line.removeprefix("[ERROR]").strip() for line in output.splitlines() if "[ERROR]" in line]
    for line in errors:
        for marker in ("Could not find artifact", "Could not transfer artifact", "Could not resolve"):
            if marker in line:
                return line[line.index(marker) :].split(" -> [Help")[0].strip()
    return errors[0] if errors and errors[0] else f"mvn failed with no [ERROR] line ({output.strip()[-200:]})"


def java() -> str:
    found = shutil.which("java")
    if found is None:
        raise KafkaUnavailable(
            "java is not on PATH: install a JDK 17+ (Debian: openjdk-17-jre-headless) to run Kafka"
        )
    return found
