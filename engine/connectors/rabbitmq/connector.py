"""Declares the exchange and one queue per topic on start; deletes what it declared when deleted.

Pausing, stopping, restarting, a rebalance or a worker shutdown leave them (and the messages in
the queues) in place. ``deleted()`` deletes the queues and the exchange this incarnation
created, as its ledger lists them (``provisioning``), and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

import aio_pika
import aio_pika.abc
import structlog

from engine.api import ConfigDef, ConnectException, SinkConnector, Task
from engine.connectors.rabbitmq import provisioning
from engine.connectors.rabbitmq.config import CONFIG_DEF, CONNECT_TIMEOUT_S, RabbitConfig, ledger_name
from engine.connectors.rabbitmq.task import RabbitMQSinkTask

log = structlog.get_logger(component="rabbitmq")

VERSION = "1.0.0"


def topics_of(props: Mapping[str, str]) -> list[str]:
    return [t.strip() for t in props.get("topics", "").split(",") if t.strip()]


class RabbitMQSinkConnector(SinkConnector):
    async def start(self, props: dict[str, str]) -> None:
        """The exchange, and a queue per topic listed in ``topics`` (with ``topics.regex`` the tasks declare
        each topic's queue when its partitions are first assigned)."""
        self._config = config = RabbitConfig.parse(props)
        self._props = dict(props)
        connection = await aio_pika.connect(config.url, timeout=CONNECT_TIMEOUT_S)
        provisioner = provisioning.Provisioner(connection, self._ledger())
        try:
            created = [config.exchange] if await provisioner.ensure_exchange(config.exchange) else []
            for queue, topic in ((config.queue(t), t) for t in topics_of(props)):
                created += [queue] if await provisioner.ensure_queue(queue, config.exchange, topic) else []
            if created:
                log.info("rabbitmq.declared", connector=config.name, created=created)
        finally:
            await provisioner.close()
            await connection.close()

    def stop(self) -> None:
        return None  # exchange and queues stay: only deletion removes what start() declared

    def task_class(self) -> type[Task]:
        return RabbitMQSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props, **{"rabbitmq.ledger": self._ledger()}) for _ in range(max_tasks)]

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def version(self) -> str:
        return VERSION

    async def deleted(self) -> None:
        """Delete the queues and exchange this incarnation declared (its ledger), then the ledger; idempotent."""
        config = RabbitConfig.parse(self.context.configs())
        connection = await aio_pika.connect(config.url, timeout=CONNECT_TIMEOUT_S)
        try:
            await self._cleanup(connection, self._ledger())
        finally:
            await connection.close()

    async def _cleanup(self, connection: aio_pika.abc.AbstractConnection, ledger: str) -> None:
        """The cleanup's steps (a test kills the worker between them)."""
        await provisioning.delete_recorded(connection, ledger, connector=self.context.configs().get("name"))

    def _ledger(self) -> str:
        try:
            incarnation: str | None = self.context.incarnation()
        except ConnectException:
            incarnation = None
        return ledger_name(self.context.configs().get("name", "connector"), incarnation)
