"""Servers the whole test session (or a benchmark run) shares, each started on first use and stopped
when the process exits: a private RabbitMQ node, and a private PostgreSQL at the default
``wal_level=replica`` holding the database ``test`` (the audit-table connector's application
database). The CDC source's ``wal_level=logical`` cluster is the ``logical_pg`` fixture.
"""

from __future__ import annotations

import atexit
import contextlib
import functools

from tests.postgres_server import private_postgres
from tests.rabbitmq_server import private_rabbitmq

_running = contextlib.ExitStack()
atexit.register(_running.close)


@functools.cache
def rabbitmq_url() -> str:
    """``amqp://guest:guest@127.0.0.1:<port>/`` of the session's RabbitMQ node."""
    return _running.enter_context(private_rabbitmq()).url


@functools.cache
def postgres_url() -> str:
    """``postgresql://postgres@127.0.0.1:<port>/test`` of the session's application PostgreSQL."""
    return _running.enter_context(private_postgres("replica", database="test")).url
