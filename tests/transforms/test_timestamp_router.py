"""TimestampRouter: ${topic} and ${timestamp} (SimpleDateFormat, UTC) in topic.format."""

from __future__ import annotations

import pytest

from engine.api.errors import ConfigException, DataException
from engine.api.records import SourceRecord
from engine.transforms.timestamp_router import TimestampRouter

STAMP = 1483425001864  # 2017-01-03T06:30:01.864Z


def _router(**configs: str) -> TimestampRouter:
    t = TimestampRouter()
    t.configure(configs)
    return t


def test_defaults() -> None:
    assert _router().apply(SourceRecord(topic="test", timestamp=STAMP)).topic == "test-20170103"


def test_custom_formats() -> None:
    t = _router(
        **{"topic.format": "${timestamp}_${topic}_${topic}", "timestamp.format": "yyyy-MM-dd'T'HH:mm:ss.SSS"}
    )
    assert t.apply(SourceRecord(topic="t", timestamp=STAMP)).topic == "2017-01-03T06:30:01.864_t_t"


def test_missing_timestamp() -> None:
    with pytest.raises(DataException, match="Timestamp missing on record"):
        _router().apply(SourceRecord(topic="t"))


def test_unsupported_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigException, match=r"timestamp\.format"):
        _router(**{"timestamp.format": "yyyy-ww"})
    with pytest.raises(ConfigException, match="Illegal pattern character 'b'"):
        _router(**{"timestamp.format": "bad"})
