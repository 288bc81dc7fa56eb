"""Source topic creation by the worker (KIP-158: ``topic.creation.*`` on the connector).

A connector that sets ``topic.creation.default.partitions`` (or ``.replication.factor``) has its
tasks create each topic before the first record is sent to it, unless the worker sets
``topic.creation.enable=false``. Groups listed in ``topic.creation.groups`` are tried in order:
the first whose ``include`` regexes match the topic (and ``exclude`` ones do not) decides the
partitions, replication factor and topic configs; ``default`` matches everything, and a group
without a replication factor takes the default group's. ``-1`` partitions or replication factor
means the broker's default (one partition, one copy in memory).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.api.errors import ConfigException
from engine.topics.base import Topics

PREFIX = "topic.creation."
_GROUP_KEYS = {"include", "exclude", "partitions", "replication.factor"}


@dataclass(frozen=True, slots=True)
class CreationGroup:
    name: str
    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]
    partitions: int
    configs: dict[str, str]
    replication_factor: int = -1

    def matches(self, topic: str) -> bool:
        if self.name != "default" and not any(p.fullmatch(topic) for p in self.include):
            return False
        return not any(p.fullmatch(topic) for p in self.exclude)


def _patterns(raw: str, key: str) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(re.compile(p.strip()) for p in raw.split(",") if p.strip())
    except re.error as exc:
        raise ConfigException(f"Invalid value {raw} for configuration {key}: {exc}") from exc


def _partitions(raw: str | None, key: str) -> int:
    if raw is None or not raw.strip():
        return -1
    try:
        value = int(raw)
    except ValueError:
        raise ConfigException(f"Invalid value {raw} for configuration {key}: Not a number of type INT") from None
    if value == 0 or value < -1:
        raise ConfigException(f"Invalid value {raw} for configuration {key}: Number of partitions must be positive, "
                              "or -1 to use the broker's default")
    return value


def _replication_factor(raw: str | None, key: str) -> int | None:
    """Connect's ``TopicCreationConfig``: -1 (the broker's default) or at least 1; None when not set."""
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ConfigException(f"Invalid value {raw} for configuration {key}: Not a number of type SHORT") from None
    if value == 0 or value < -1:
        raise ConfigException(f"Invalid value {raw} for configuration {key}: Replication factor must be positive "
                              "and not larger than the number of brokers in the Kafka cluster, or -1 to use the "
                              "broker's default")
    return value


def _group(name: str, config: Mapping[str, str], default_replication: int) -> CreationGroup:
    prefix = f"{PREFIX}{name}."
    own = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    replication = _replication_factor(own.get("replication.factor"), prefix + "replication.factor")
    return CreationGroup(
        name=name,
        include=_patterns(own.get("include", ""), prefix + "include"),
        exclude=_patterns(own.get("exclude", ""), prefix + "exclude"),
        partitions=_partitions(own.get("partitions"), prefix + "partitions"),
        configs={k: v for k, v in own.items() if k not in _GROUP_KEYS},
        replication_factor=default_replication if replication is None else replication,
    )


@dataclass(frozen=True, slots=True)
class TopicCreation:
    groups: tuple[CreationGroup, ...]

    @classmethod
    def from_config(cls, connector: Mapping[str, str], worker: Mapping[str, str]) -> TopicCreation | None:
        """None when the connector does not use topic creation (or the worker disabled it)."""
        if worker.get("topic.creation.enable", "true").strip().lower() == "false":
            return None
        if not any(f"{PREFIX}default.{k}" in connector for k in ("partitions", "replication.factor")):
            return None
        names = [n.strip() for n in connector.get(f"{PREFIX}groups", "").split(",") if n.strip()]
        key = f"{PREFIX}default.replication.factor"
        default_replication = _replication_factor(connector.get(key), key)
        default = -1 if default_replication is None else default_replication
        return cls(tuple(_group(n, connector, default) for n in [*names, "default"]))

    def group_for(self, topic: str) -> CreationGroup:
        return next(g for g in self.groups if g.matches(topic))

    async def ensure(self, topics: Topics, topic: str, client_config: Mapping[str, Any] | None = None) -> bool:
        """Create ``topic`` per its group if it does not exist; True if this call created it.
        ``client_config``: the connector's admin client arguments (``admin.override.*``)."""
        group = self.group_for(topic)
        return await topics.create_topic(topic, max(1, group.partitions), group.configs, client_config,
                                         replication_factor=group.replication_factor)
