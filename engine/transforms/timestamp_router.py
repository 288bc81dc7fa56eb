"""``TimestampRouter``: rewrites the topic from the original topic and the record's timestamp.

Mostly for sinks, where the topic names the destination table or index: with the defaults,
topic ``orders`` and a record stamped 2024-03-01 go to ``orders-20240301`` (UTC). ``timestamp.format``
is a SimpleDateFormat pattern (see ``engine.transforms.java_time_format``); an unsupported one is a
ConfigException at configure time, where Kafka would fail on the first record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException, DataException
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.transforms.java_time_format import SimpleDateFormat

__all__ = ["TimestampRouter"]


class TimestampRouter(Transformation[ConnectRecord]):
    """Topic = ``topic.format`` with ``${topic}`` and ``${timestamp}`` replaced."""

    OVERVIEW_DOC = (
        "Update the record's topic field as a function of the original topic value and the record "
        "timestamp.<p/>This is mainly useful for sink connectors, since the topic field is often used "
        "to determine the equivalent entity name in the destination system(e.g. database table or "
        "search index name)."
    )
    TOPIC_FORMAT = "topic.format"
    TIMESTAMP_FORMAT = "timestamp.format"
    CONFIG_DEF = (
        ConfigDef()
        .define(
            TOPIC_FORMAT,
            ConfigType.STRING,
            "${topic}-${timestamp}",
            importance=Importance.HIGH,
            documentation="Format string which can contain <code>${topic}</code> and "
            "<code>${timestamp}</code> as placeholders for the topic and timestamp, "
            "respectively.",
        )
        .define(
            TIMESTAMP_FORMAT,
            ConfigType.STRING,
            "yyyyMMdd",
            importance=Importance.HIGH,
            documentation="Format string for the timestamp that is compatible with "
            "<code>java.text.SimpleDateFormat</code>.",
        )
    )

    def __init__(self) -> None:
        self.topic_format = "${topic}-${timestamp}"
        self.timestamp_format = SimpleDateFormat("yyyyMMdd")
        self._last: tuple[tuple[str, int], str] | None = None  # (topic, timestamp) -> routed topic

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self.topic_format = parsed[self.TOPIC_FORMAT]
        pattern = parsed[self.TIMESTAMP_FORMAT]
        try:
            self.timestamp_format = SimpleDateFormat(pattern)
            self._last = None
        except ValueError as exc:
            raise ConfigException(self.TIMESTAMP_FORMAT, pattern, str(exc)) from exc

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        timestamp = record.timestamp
        if timestamp is None:
            raise DataException(f"Timestamp missing on record: {record}")
        key = (record.topic, timestamp)
        topic = self._last[1] if self._last is not None and self._last[0] == key else None
        if topic is None:  # records come in runs of one topic and (nearly) one timestamp: format once per run
            formatted = self.timestamp_format.format(timestamp)
            topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", formatted)
            self._last = (key, topic)
        return record.new_record(topic=topic)
