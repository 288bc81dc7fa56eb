"""Worker settings for the process's SparkSession, read from ``spark.*`` worker keys.

Kept free of pyspark imports so a worker that never runs Spark work never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from engine.api.errors import ConfigException

MASTER = "spark.master"
REMOTE = "spark.remote"
APP_NAME = "spark.app.name"
SERVER_TIMEOUT = "spark.server.timeout.ms"
CONF_PREFIX = "spark.conf."

DEFAULT_MASTER = "local[*]"
DEFAULT_APP_NAME = "connect-engine"
DEFAULT_SERVER_TIMEOUT_MS = 10000

# Loopback and no UI by default in local mode: otherwise the driver binds the external
# address and opens a web UI on :4040 on every worker.
_LOCAL_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
    }
)


@dataclass(frozen=True)
class SparkSettings:
    """How to build the one SparkSession: classic (``master``) or Spark Connect (``remote``)."""

    master: str = DEFAULT_MASTER
    remote: str | None = None
    app_name: str = DEFAULT_APP_NAME
    conf: Mapping[str, str] = field(default_factory=dict)
    # how long the first use waits for a standalone master or a Spark Connect server to answer
    server_timeout_ms: int = DEFAULT_SERVER_TIMEOUT_MS

    @classmethod
    def from_worker(cls, raw: Mapping[str, str]) -> SparkSettings:
        """Read ``spark.master``, ``spark.remote``, ``spark.app.name``, ``spark.server.timeout.ms`` and
        ``spark.conf.<key>``; a bad timeout raises ConfigException naming the setting."""
        conf = {
            key[len(CONF_PREFIX) :]: str(value)
            for key, value in raw.items()
            if key.startswith(CONF_PREFIX) and len(key) > len(CONF_PREFIX)
        }
        remote = raw.get(REMOTE) or None
        return cls(
            master=raw.get(MASTER) or DEFAULT_MASTER,
            remote=remote,
            app_name=raw.get(APP_NAME) or DEFAULT_APP_NAME,
            conf=MappingProxyType(conf),
            server_timeout_ms=_timeout_ms(raw.get(SERVER_TIMEOUT)),
        )

    @property
    def is_local(self) -> bool:
        """True for an in-process classic driver (``local``, ``local[4]``, ``local[*]``...)."""
        return self.remote is None and self.master.startswith("local")

    @property
    def is_connect(self) -> bool:
        return self.remote is not None

    @property
    def is_standalone(self) -> bool:
        """A classic driver in this process with executors on a standalone cluster (``spark://``)."""
        return self.remote is None and self.master.startswith("spark://")

    def session_conf(self) -> dict[str, str]:
        """The config given to the session builder: local defaults, then the user's keys."""
        merged: dict[str, str] = dict(_LOCAL_DEFAULTS) if self.is_local else {}
        merged.update(self.conf)
        return merged


def _timeout_ms(value: str | None) -> int:
    if value is None or not str(value).strip():
        return DEFAULT_SERVER_TIMEOUT_MS
    try:
        parsed = int(str(value).strip())
    except ValueError:
        parsed = 0
    if parsed <= 0:
        raise ConfigException(SERVER_TIMEOUT, value, "Value must be a positive number of milliseconds")
    return parsed
