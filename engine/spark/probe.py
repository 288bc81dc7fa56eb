"""Whether the Spark a worker is configured for answers, checked before the session is built.

Without it an unreachable server costs minutes, not seconds: a classic driver registers with a dead
standalone master for three 20 s rounds before giving up (and its jobs wait for executors meanwhile),
and the Spark Connect client retries a refused channel for about ten minutes. The probe turns both
into one clear error within ``spark.server.timeout.ms``, which fails the task that asked for Spark.
"""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from engine.api.errors import ConnectException
from engine.spark.settings import SERVER_TIMEOUT, SparkSettings


class SparkUnreachable(ConnectException):
    """The standalone master or Spark Connect server did not answer within ``spark.server.timeout.ms``."""


def probe(settings: SparkSettings) -> None:
    """Raise SparkUnreachable unless the configured master or Connect server answers in time.

    Local masters need nothing; ``spark://`` masters (a comma-separated list for HA) need one
    accepting TCP connections; a ``sc://`` server must bring a gRPC channel to READY.
    """
    timeout = settings.server_timeout_ms / 1000
    if settings.remote is not None:
        _probe_connect(settings.remote, timeout)
    elif settings.is_standalone:
        _probe_master(settings.master, timeout)


def _probe_master(master: str, timeout: float) -> None:
    hosts = master[len("spark://") :].split(",")
    deadline = time.monotonic() + timeout
    errors: list[str] = []
    while True:
        for host in hosts:
            name, _, port = host.strip().rpartition(":")
            try:
                with socket.create_connection(
                    (name, int(port)), timeout=max(0.1, min(2.0, deadline - time.monotonic()))
                ):
                    return
            except (OSError, ValueError) as exc:
                errors.append(f"{host}: {type(exc).__name__}: {exc}")
        if time.monotonic() >= deadline:
            raise SparkUnreachable(
                f"Spark master {master} is unreachable (waited {timeout:g} s, {SERVER_TIMEOUT}): {errors[-1]}"
            )
        errors.clear()
        time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def _probe_connect(remote: str, timeout: float) -> None:
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder

    try:
        channel = DefaultChannelBuilder(remote).toChannel()
    except Exception as exc:  # a malformed URL: say which setting holds it
        raise SparkUnreachable(
            f"Invalid Spark Connect URL in spark.remote: {type(exc).__name__}: {exc}"
        ) from exc
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        endpoint = urlsplit(remote.replace("sc://", "http://", 1)).netloc.split(";")[0] or remote
        # the endpoint only: the URL's parameters may hold a token
        raise SparkUnreachable(
            f"Spark Connect server {endpoint} (spark.remote) is unreachable: no gRPC channel "
            f"within {timeout:g} s ({SERVER_TIMEOUT})"
        ) from None
    finally:
        channel.close()
