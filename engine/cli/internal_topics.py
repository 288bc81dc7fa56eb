"""``connect-engine internal-topics create --worker-config FILE``: Connect 4.4's ``connect-internal-topics.sh``
(KIP-1209, ``org.apache.kafka.tools.ConnectInternalTopics``).

It creates a cluster's offsets, config and status topics, compacted, from a worker's properties, so that
workers with ``internal.topics.automatic.creation.enable=false`` find them. It prints what Connect's tool
prints, line for line, and exits as it does: 0 done, 1 a configuration error (its message on stderr), 2
anything else ("Unexpected error: ..."). Partitions and replication factors default to what our worker
would create (``engine.config.worker_keys``: replication factor 1, where Connect's tool and worker say
3); other ``<prefix>*`` keys (``config.storage.min.insync.replicas``) become topic settings, as in Connect.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from dataclasses import dataclass
from typing import TextIO

from engine.config.properties import load_properties
from engine.config.worker import WorkerConfig, int_setting
from engine.config.worker_keys import by_name
from engine.errors import ConfigError
from engine.storage.kafka_topic_admin import create_internal_topic

CREATE = "create"
# Connect's order: offsets, config, status
_TOPICS = (
    ("offset.storage.topic", "offset.storage.", True),
    ("config.storage.topic", "config.storage.", False),
    ("status.storage.topic", "status.storage.", True),
)
_NOT_SETTINGS = ("topic", "replication.factor", "partitions")


@dataclass(frozen=True, slots=True)
class TopicSettings:
    """One internal topic as the tool creates it."""

    property_name: str
    topic: str
    partitions: int
    replication_factor: int
    settings: dict[str, str]


def topic_settings(props: dict[str, str], out: TextIO) -> list[TopicSettings]:
    """The three topics, in Connect's order; its refusals (``ConfigError``) and its "Ignoring" lines."""
    found: list[TopicSettings] = []
    for property_name, _, _ in _TOPICS:
        if property_name not in props:  # Connect's CONFIG_DEF gives the topic names no default
            raise ConfigError(f'Missing required configuration "{property_name}" which has no default value.')
    for property_name, _, _ in _TOPICS:
        if not props[property_name].strip():
            raise ConfigError(
                f"Must specify non-empty value for required internal topic config: '{property_name}'."
            )
    for property_name, prefix, partitioned in _TOPICS:
        settings = {k.removeprefix(prefix): v for k, v in props.items() if k.startswith(prefix)}
        if not partitioned and "partitions" in settings:
            out.write(
                f"Ignoring '{prefix}partitions={settings['partitions']}' setting, since config topic "
                "partitions is always 1\n"
            )
        policy = settings.pop("cleanup.policy", None)
        if policy is not None:
            out.write(
                f"Ignoring '{prefix}cleanup.policy={policy}' setting, since compaction is always used\n"
            )
        partitions = int_setting(props, f"{prefix}partitions", _default(f"{prefix}partitions"), minimum=1)
        factor_key = f"{prefix}replication.factor"
        factor = (
            -1
            if props.get(factor_key, "").strip() == "-1"
            else int_setting(props, factor_key, _default(factor_key), minimum=1)
        )
        found.append(
            TopicSettings(
                property_name,
                props[property_name].strip(),
                partitions if partitioned else 1,
                factor,
                {k: v for k, v in settings.items() if k not in _NOT_SETTINGS},
            )
        )
    return found


def _default(key: str) -> int:
    default = by_name()[key].default if key in by_name() else None
    return int(default) if default is not None else 1


async def create_topics(worker: WorkerConfig, topics: list[TopicSettings], out: TextIO) -> None:
    servers = worker.get("bootstrap.servers")
    if servers is None:
        raise ConfigError(
            'Missing required configuration "bootstrap.servers" which has no default value.',
            errors={"bootstrap.servers": ["is required"]},
        )
    out.write("Admin properties loaded for topic admin\n")
    for topic in topics:
        created = await create_internal_topic(
            servers,
            topic.topic,
            partitions=topic.partitions,
            replication_factor=topic.replication_factor,
            property_name=topic.property_name,
            client_id="connect-internal-topics",
            settings=topic.settings,
            client_args=worker.kafka.own(),
        )
        out.write(
            f"{'Created internal topic' if created else 'Internal topic already exists'}: {topic.topic}\n"
        )


def run(subcommand: str, worker_config: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Connect's ``mainNoExit``: the exit code, the output on ``out`` and ``err`` as Connect prints it."""
    try:
        _execute(subcommand, worker_config, out)
    except ConfigError as exc:
        err.write(f"{exc}\n")
        return 1
    except Exception as exc:
        err.write(f"Unexpected error: {exc}\n{traceback.format_exc()}")
        return 2
    out.write("Command executed successfully\n")
    return 0


def _execute(subcommand: str, worker_config: str, out: TextIO) -> None:
    if not worker_config.strip():
        raise ConfigError("--worker-config must be specified and non-blank")
    props = load_properties(worker_config)
    out.write("Parsed arguments and loaded worker properties\n")
    out.write(f"Subcommand: {subcommand}\n")
    if subcommand != CREATE:
        raise ConfigError(f"Unrecognized subcommand: '{subcommand}'")
    topics = topic_settings(props, out)
    out.write("Running create command for internal topics\n")
    asyncio.run(create_topics(WorkerConfig.parse(props), topics, out))
