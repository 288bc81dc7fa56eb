"""Source topic creation by the worker (KIP-158: ``topic.creation.*`` on the connector).

A connector that sets ``topic.creation.default.partitions`` (or ``.replication.factor``) has its
tasks create each topic before the first record is sent to it, unless the worker sets
``topic.creation.enable=false``. Groups listed in ``topic.creation.groups`` are tried in order:
the first whose ``include`` regexes match the topic (and ``exclude`` ones do not) decides the
partitions and topic configs; ``default`` matches everything. ``-1`` partitions means the
backend's default (one partition in memory). The replication factor is the topics backend's own
(``KafkaTopics(replication_factor=...)``): a per-group one is accepted and not applied.
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


def _group(name: str, config: Mapping[str, str]) -> CreationGroup:
    prefix = f"{PREFIX}{name}."
    own = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    return CreationGroup(
        name=name,
        include=_patterns(own.get("include", ""), prefix + "include"),
        exclude=_patterns(own.get("exclude", ""), prefix + "exclude"),
        partitions=_partitions(own.get("partitions"), prefix + "partitions"),
        configs={k: v for k, v in own.items() if k not in _GROUP_KEYS},
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
        return cls(tuple(_group(n, connector) for n in [*names, "default"]))

    def group_for(self, topic: str) -> CreationGroup:
        return next(g for g in self.groups if g.matches(topic))

    async def ensure(self, topics: Topics, topic: str, client_config: Mapping[str, Any] | None = None) -> bool:
        """Create ``topic`` per its group if it does not exist; True if this call created it.
        ``client_config``: the connector's admin client arguments (``admin.override.*``)."""
        group = self.group_for(topic)
        return await topics.create_topic(topic, max(1, group.partitions), group.configs, client_config)
