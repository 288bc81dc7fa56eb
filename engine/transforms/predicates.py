"""The built-in predicates (``org.apache.kafka.connect.transforms.predicates``): conditions that
decide whether a transformation applies to a record (``transforms.<a>.predicate``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from engine.api.config_def import (
    CompositeValidator,
    ConfigDef,
    ConfigDefError,
    ConfigType,
    Importance,
    NonEmptyString,
)
from engine.api.errors import ConfigException
from engine.api.records import ConnectRecord
from engine.api.transforms import Predicate
from engine.transforms.regex_router import RegexValidator, java_regex

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]


class TopicNameMatches(Predicate[ConnectRecord]):
    """True for records whose topic matches ``pattern`` in full (Java's ``Matcher.matches``)."""

    OVERVIEW_DOC = (
        "A predicate which is true for records with a topic name that matches the configured "
        "regular expression."
    )
    PATTERN_CONFIG = "pattern"
    CONFIG_DEF = ConfigDef().define(
        PATTERN_CONFIG,
        ConfigType.STRING,
        validator=CompositeValidator.of(NonEmptyString(), RegexValidator()),
        importance=Importance.MEDIUM,
        documentation="A Java regular expression for matching against the name of a record's topic.",
    )

    def __init__(self) -> None:
        self.pattern: re.Pattern[str] | None = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = self.CONFIG_DEF.parse(configs)[self.PATTERN_CONFIG]
        try:
            self.pattern = java_regex(value)
        except re.error as exc:
            raise ConfigException(
                self.PATTERN_CONFIG, value, f"entry must be a Java-compatible regular expression: {exc}"
            ) from exc

    def test(self, record: ConnectRecord) -> bool:
        if self.pattern is None:
            raise ConfigDefError("TopicNameMatches used before configure()")
        return self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={None if self.pattern is None else self.pattern.pattern}}}"


class HasHeaderKey(Predicate[ConnectRecord]):
    """True for records with at least one header called ``name``."""

    OVERVIEW_DOC = "A predicate which is true for records with at least one header with the configured name."
    NAME_CONFIG = "name"
    CONFIG_DEF = ConfigDef().define(
        NAME_CONFIG,
        ConfigType.STRING,
        validator=NonEmptyString(),
        importance=Importance.MEDIUM,
        documentation="The header name.",
    )

    def __init__(self) -> None:
        self.name: str | None = None

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.name = self.CONFIG_DEF.parse(configs)[self.NAME_CONFIG]

    def test(self, record: ConnectRecord) -> bool:
        name = self.name
        return any(header.key == name for header in record.headers)

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


class RecordIsTombstone(Predicate[ConnectRecord]):
    """True for tombstones: records whose value is None."""

    OVERVIEW_DOC = "A predicate which is true for records which are tombstones (i.e. have null value)."
    CONFIG_DEF = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def test(self, record: ConnectRecord) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
