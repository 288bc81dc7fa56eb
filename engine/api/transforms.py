"""Single message transforms and predicates (``org.apache.kafka.connect.transforms``, KIP-66, KIP-585).

A transformation is configured once per task from ``transforms.<alias>.*`` (with ``type``,
``predicate`` and ``negate`` removed) and then applied to every record, on the event loop:
transformations must not block. ``apply`` returns a new record (``record.new_record(...)``),
the record unchanged, or None to drop it. Both kinds are closed when the task closes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from engine.api.config_def import ConfigDef
from engine.api.records import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """``Transformation<R>``: ``configure``, ``apply``, ``config``, ``close``."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def apply(self, record: R) -> R | None: ...

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        return None

    def version(self) -> str:
        return "1.0.0"


class Predicate(ABC, Generic[R]):
    """``Predicate<R>``: decides whether a transformation applies to a record."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def test(self, record: R) -> bool: ...

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        return None

    def version(self) -> str:
        return "1.0.0"
