"""A sink connector must not consume in the cluster's own group (Kafka's
``DistributedHerder.validateSinkConnectorConfig``, distributed only):
the workers' membership protocol and the sink's partition assignment would fight over it."""

from __future__ import annotations

from collections.abc import Mapping

from engine.api.connector import SinkConnector
from engine.errors import ConfigError
from engine.plugins.loading import load_connector_class
from engine.worker.sink_loop import group_id as sink_group_id


def check_sink_group(name: str, config: Mapping[str, str], worker_group: str) -> None:
    try:
        if not issubclass(load_connector_class(config.get("connector.class", "")), SinkConnector):
            return
    except ConfigError:
        return  # validation already reported the class
    if sink_group_id(name, config) == worker_group:
        message = f"Consumer group for sink connector named {name} conflicts with Connect worker group {worker_group}"
        raise ConfigError(message, errors={"consumer.override.group.id": [message]})
