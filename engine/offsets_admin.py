"""KIP-875 offset administration: a connector's offsets read, altered and reset, with their preconditions,
the sink offset format and the connector hook; KIP-995's ``initial_offsets`` at creation reuses them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from engine.api._invoke import invoke
from engine.api.connector import Connector, SinkConnector
from engine.api.records import TopicPartition
from engine.configlog.snapshot import ConfigSnapshot
from engine.errors import ConfigError, ConnectorNotFound, EngineError, InvalidRequest
from engine.plugins.loading import load_connector_class
from engine.storage.base import OffsetStore
from engine.topics.base import TopicPartition as DataTopicPartition
from engine.topics.base import Topics
from engine.topics.errors import GroupNotEmpty, TopicsError
from engine.worker.sink_loop import group_id as sink_group_id
from states import TargetState

log = structlog.get_logger(component="offsets")

ALTERED = "altered"
RESET = "reset"


# ---- the verbs: GET, PATCH and DELETE /connectors/{c}/offsets ------------------------------------


async def connector_offsets(
    snapshot: ConfigSnapshot, topics: Topics, store: OffsetStore, name: str
) -> dict[str, Any]:
    """KIP-875's ``GET /connectors/{c}/offsets`` shape: ``{"offsets": [{"partition", "offset"}]}``.

    A source's come from the offset store; a sink's are its consumer group's committed offsets
    (``connect-<name>`` or ``consumer.override.group.id``), as Kafka's worker lists them.
    """
    config = _config(snapshot, name)
    if _is_sink_config(config):
        committed = await topics.group_offsets(sink_group_id(name, config))
        return {"offsets": sink_offsets_json(committed)}
    return {"offsets": [{"partition": p, "offset": store.get(name, p)} for p in store.partitions(name)]}


async def alter_connector_offsets(
    snapshot: ConfigSnapshot, topics: Topics, store: OffsetStore, name: str, offsets: Sequence[Any]
) -> str:
    """KIP-875 ``PATCH /offsets``: only for a STOPPED connector with no tasks; returns Connect's message."""
    config, cls = _stopped(snapshot, name)
    if is_sink(cls):
        sink = sink_offsets(offsets)
        by_connector = await call_alter_offsets(cls, name, config, sink)
        await write_group_offsets(topics, name, sink_group_id(name, config), sink)
    else:
        pairs = source_offsets(offsets)
        by_connector = await call_alter_offsets(cls, name, config, source_hook_offsets(pairs))
        store.write(name, pairs)
    return result_message(by_connector, ALTERED)


async def reset_connector_offsets(
    snapshot: ConfigSnapshot, topics: Topics, store: OffsetStore, name: str
) -> str:
    """KIP-875 ``DELETE /offsets``: every known partition's offset removed; idempotent."""
    config, cls = _stopped(snapshot, name)
    if is_sink(cls):
        group = sink_group_id(name, config)
        committed = await topics.group_offsets(group)
        hook: Any = {api_partition(tp): None for tp in committed}
        by_connector = await call_alter_offsets(cls, name, config, hook)
        await delete_group(topics, name, group)
    else:
        partitions = store.partitions(name)
        by_connector = await call_alter_offsets(
            cls, name, config, source_hook_offsets([(p, None) for p in partitions])
        )
        store.reset(name)
    return result_message(by_connector, RESET)


def _config(snapshot: ConfigSnapshot, name: str) -> dict[str, str]:
    config = snapshot.connectors.get(name)
    if config is None:
        raise ConnectorNotFound(name)
    return config


def _is_sink_config(config: Mapping[str, str]) -> bool:
    try:
        return is_sink(load_connector_class(config.get("connector.class", "")))
    except ConfigError:
        return False


def _stopped(snapshot: ConfigSnapshot, name: str) -> tuple[dict[str, str], type[Connector]]:
    config = _config(snapshot, name)
    if snapshot.target(name) is not TargetState.STOPPED or snapshot.tasks.get(name):
        raise InvalidRequest(not_stopped_message(name))
    return config, load_connector_class(config.get("connector.class", ""))


# ---- the pieces ---------------------------------------------------------------------------------


def not_stopped_message(name: str) -> str:
    return (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
        f"the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )


def sink_offsets(entries: Sequence[Any]) -> dict[TopicPartition, int | None]:
    """Parse ``[{"partition": {"kafka_topic", "kafka_partition"}, "offset": {"kafka_offset"} | null}]``."""
    parsed: dict[TopicPartition, int | None] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, Mapping) else None
        if not isinstance(partition, Mapping):
            raise InvalidRequest("The partition for a sink connector offset cannot be null or missing")
        if "kafka_topic" not in partition or "kafka_partition" not in partition:
            raise InvalidRequest(
                "The partition for a sink connector offset must contain the keys 'kafka_topic' "
                "and 'kafka_partition'"
            )
        topic = partition["kafka_topic"]
        if not isinstance(topic, str):
            raise InvalidRequest("Kafka topic names must be valid strings and may not be null")
        if partition["kafka_partition"] is None:
            raise InvalidRequest("Kafka partitions must be valid numbers and may not be null")
        number = _integer(
            partition["kafka_partition"],
            "Failed to parse the following Kafka partition value in "
            "the provided offsets: '{}'. Partition values for sink connectors need to be integers.",
        )
        offset = entry.get("offset")
        if offset is not None and (not isinstance(offset, Mapping) or "kafka_offset" not in offset):
            raise InvalidRequest(
                "The offset for a sink connector should either be null or contain the key 'kafka_offset'"
            )
        value = (
            None
            if offset is None
            else _integer(
                offset["kafka_offset"],
                "Failed to parse the following Kafka offset value in the provided offsets: "
                "'{}'. Offset values for sink connectors need to be integers.",
            )
        )
        parsed[TopicPartition(topic, number)] = value
    return parsed


def sink_offsets_json(committed: Mapping[DataTopicPartition, int]) -> list[dict[str, Any]]:
    """A consumer group's committed offsets in KIP-875's sink shape, sorted by topic and partition."""
    return [
        {
            "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
            "offset": {"kafka_offset": offset},
        }
        for tp, offset in sorted(committed.items())
    ]


def api_partition(tp: DataTopicPartition) -> TopicPartition:
    """The connector API's TopicPartition (what ``SinkConnector.alter_offsets`` receives)."""
    return TopicPartition(tp.topic, tp.partition)


_NOT_STOPPED_YET = (
    "Failed to {action} consumer group offsets for connector {name} either because its tasks haven't "
    "stopped completely yet or the connector was resumed before the request to alter its offsets "
    "could be successfully completed. If the connector is in a stopped state, this operation can be "
    "safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to "
    "get rid of the zombie sink tasks."
)


async def _group_admin(name: str, action: str, change: Awaitable[None]) -> None:
    """One group write with Kafka's messages for its failures (``Worker.alter/resetSinkConnectorOffsets``)."""
    try:
        await change
    except GroupNotEmpty:
        raise EngineError(_NOT_STOPPED_YET.format(action=action, name=name)) from None
    except TopicsError as exc:
        raise EngineError(f"Failed to {action} consumer group offsets for connector {name}: {exc}") from exc


async def write_group_offsets(
    topics: Topics, name: str, group: str, offsets: Mapping[TopicPartition, int | None]
) -> None:
    """Kafka's ``Worker.alterSinkConnectorOffsets``: the consumer group's offsets set (or removed).

    A negative offset is what Kafka's ``OffsetAndMetadata`` refuses (an IllegalArgumentException that
    Connect wraps in its generic message, a 500).
    """
    if any(o is not None and o < 0 for o in offsets.values()):
        raise EngineError(f"Failed to modify offsets for sink connector {name}")
    await _group_admin(
        name,
        "alter",
        topics.alter_group_offsets(
            group, {DataTopicPartition(tp.topic, tp.partition): o for tp, o in offsets.items()}
        ),
    )
    log.info("connector.sink_offsets_altered", connector=name, group=group, partitions=len(offsets))


async def delete_group(topics: Topics, name: str, group: str) -> None:
    """Kafka's ``Worker.resetSinkConnectorOffsets``: the connector's consumer group is deleted."""
    await _group_admin(name, "reset", topics.delete_group(group))
    log.info("connector.sink_offsets_reset", connector=name, group=group)


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


async def call_alter_offsets(
    cls: type[Connector], name: str, config: Mapping[str, str], offsets: Any
) -> bool:
    """The connector's own hook, on a fresh instance as Connect does; False = framework offsets only."""
    instance = cls()
    hook = getattr(instance, "alter_offsets", None)
    if hook is None:
        return False
    try:
        return bool(await invoke(hook, dict(config), offsets))
    except NotImplementedError:
        raise EngineError(
            f"Failed to modify offsets for connector {name} because it doesn't support external "
            "modification of offsets"
        ) from None


def source_hook_offsets(pairs: Sequence[tuple[dict[str, Any], dict[str, Any] | None]]) -> dict[str, Any]:
    """What a source connector's ``alter_offsets`` receives: partition JSON text -> offset."""
    return {json.dumps(p, sort_keys=True): o for p, o in pairs}


def result_message(by_connector: bool, action: str) -> str:
    if by_connector:
        return f"The offsets for this connector have been {action} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {action} successfully. However, "
        "if this connector manages offsets externally, they will need to be manually "
        f"{action} in the system that the connector uses."
    )


def is_sink(cls: type[Connector]) -> bool:
    return issubclass(cls, SinkConnector)


# ---- KIP-995: offsets given at creation -------------------------------------------------------

NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"


@dataclass(frozen=True)
class InitialOffsets:
    """``initial_offsets`` parsed for the connector's kind and accepted by its ``alter_offsets``."""

    sink: Mapping[TopicPartition, int | None] | None
    source: Sequence[tuple[dict[str, Any], dict[str, Any] | None]] | None
    by_connector: bool

    @property
    def message(self) -> str:
        """The answer's ``offsets_status``: KIP-875's alter message."""
        return result_message(self.by_connector, ALTERED)


async def check_initial(
    cls: type[Connector], name: str, config: Mapping[str, str], entries: Any
) -> InitialOffsets:
    """KIP-995 step 2: the PATCH ``/offsets`` checks (the format, then the connector's
    ``alter_offsets``), without the ones about an existing, STOPPED connector; nothing is written."""
    if not isinstance(entries, list) or not entries:
        raise InvalidRequest(NO_OFFSETS)
    if is_sink(cls):
        sink = sink_offsets(entries)
        return InitialOffsets(sink, None, await call_alter_offsets(cls, name, config, sink))
    pairs = source_offsets(entries)
    return InitialOffsets(
        None, pairs, await call_alter_offsets(cls, name, config, source_hook_offsets(pairs))
    )


async def write_initial(
    initial: InitialOffsets, offsets: OffsetStore, topics: Topics, name: str, group: str
) -> None:
    """KIP-995 step 4, while the new connector is STOPPED: a source's offsets into the offset store
    (flushed, so a task on another worker reads them), a sink's into its consumer group."""
    if initial.sink is not None:
        await write_group_offsets(topics, name, group, initial.sink)
    if initial.source is not None:
        offsets.write(name, initial.source)
        await offsets.flush()
        log.info("connector.initial_offsets_written", connector=name, partitions=len(initial.source))
