"""KIP-875 offset administration: preconditions, the sink offset format, the connector hook."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.api._invoke import invoke
from engine.api.connector import Connector, SinkConnector
from engine.api.records import TopicPartition
from engine.errors import EngineError, InvalidRequest

ALTERED = "altered"
RESET = "reset"


def not_stopped_message(name: str) -> str:
    return ("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
            f"the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")


def sink_offsets(entries: Sequence[Any]) -> dict[TopicPartition, int | None]:
    """Parse ``[{"partition": {"kafka_topic", "kafka_partition"}, "offset": {"kafka_offset"} | null}]``."""
    parsed: dict[TopicPartition, int | None] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, Mapping) else None
        if not isinstance(partition, Mapping):
            raise InvalidRequest("The partition for a sink connector offset cannot be null or missing")
        if "kafka_topic" not in partition or "kafka_partition" not in partition:
            raise InvalidRequest("The partition for a sink connector offset must contain the keys 'kafka_topic' "
                                 "and 'kafka_partition'")
        topic = partition["kafka_topic"]
        if not isinstance(topic, str):
            raise InvalidRequest("Kafka topic names must be valid strings and may not be null")
        if partition["kafka_partition"] is None:
            raise InvalidRequest("Kafka partitions must be valid numbers and may not be null")
        number = _integer(partition["kafka_partition"], "Failed to parse the following Kafka partition value in "
                          "the provided offsets: '{}'. Partition values for sink connectors need to be integers.")
        offset = entry.get("offset")
        if offset is not None and (not isinstance(offset, Mapping) or "kafka_offset" not in offset):
            raise InvalidRequest("The offset for a sink connector should either be null or contain the key "
                                 "'kafka_offset'")
        value = None if offset is None else _integer(
            offset["kafka_offset"], "Failed to parse the following Kafka offset value in the provided offsets: "
            "'{}'. Offset values for sink connectors need to be integers.")
        parsed[TopicPartition(topic, number)] = value
    return parsed


def _integer(value: Any, message: str) -> int:
    if isinstance(value, bool):
        raise InvalidRequest(message.format(value))
    try:
        return int(str(value).strip())  # Connect accepts numeric strings such as "10"
    except ValueError:
        raise InvalidRequest(message.format(value)) from None


def source_offsets(entries: Sequence[Any]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Source partitions and offsets are free-form JSON objects (an offset may be null: remove it)."""
    parsed = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("partition"), Mapping):
            raise InvalidRequest("The partition for a source connector offset cannot be null or missing")
        offset = entry.get("offset")
        if offset is not None and not isinstance(offset, Mapping):
            raise InvalidRequest("The offset for a source connector must be a JSON object or null")
        parsed.append((dict(entry["partition"]), None if offset is None else dict(offset)))
    return parsed


async def call_alter_offsets(cls: type[Connector], name: str, config: Mapping[str, str], offsets: Any) -> bool:
    """The connector's own hook, on a fresh instance as Connect does; False = framework offsets only."""
    instance = cls()
    hook = getattr(instance, "alter_offsets", None)
    if hook is None:
        return False
    try:
        return bool(await invoke(hook, dict(config), offsets))
    except NotImplementedError:
        raise EngineError(f"Failed to modify offsets for connector {name} because it doesn't support external "
                          "modification of offsets") from None


def source_hook_offsets(pairs: Sequence[tuple[dict[str, Any], dict[str, Any] | None]]) -> dict[str, Any]:
    """What a source connector's ``alter_offsets`` receives: partition JSON text -> offset."""
    return {json.dumps(p, sort_keys=True): o for p, o in pairs}


def result_message(by_connector: bool, action: str) -> str:
    if by_connector:
        return f"The offsets for this connector have been {action} successfully"
    return (f"The Connect framework-managed offsets for this connector have been {action} successfully. However, "
            "if this connector manages offsets externally, they will need to be manually "
            f"{action} in the system that the connector uses.")


def is_sink(cls: type[Connector]) -> bool:
    return issubclass(cls, SinkConnector)
