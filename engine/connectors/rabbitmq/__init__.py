"""The RabbitMQ sink: records published to an exchange it declares, one queue per topic, deleted
with the connector (only what it created)."""

from __future__ import annotations

from engine.connectors.rabbitmq.connector import RabbitMQSinkConnector
from engine.connectors.rabbitmq.task import RabbitMQSinkTask

__all__ = ["RabbitMQSinkConnector", "RabbitMQSinkTask"]
