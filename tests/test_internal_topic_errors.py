"""An internal topic's failure is that topic's error: ``ConfigLogError`` for the config topic, an
``InternalTopicError`` naming the status or offset topic otherwise, each explained as a start-up line."""

from __future__ import annotations

import pytest

from engine.cli.startup_errors import KAFKA, one_line
from engine.errors import ConfigLogError, EngineError, InternalTopicError
from engine.storage.internal_topic import InternalTopic
from engine.storage.kafka_topic_admin import topic_error


@pytest.mark.parametrize(
    ("property_name", "kind"),
    [
        ("config.storage.topic", ConfigLogError),
        ("status.storage.topic", InternalTopicError),
        ("offset.storage.topic", InternalTopicError),
    ],
)
def test_each_internal_topic_raises_its_own_error(property_name: str, kind: type[InternalTopicError]) -> None:
    error = topic_error(property_name, "t1", "Could not describe topic 't1': boom")
    assert type(error) is kind
    assert error.topic == "t1"
    assert error.retriable
    assert isinstance(error, EngineError)
    assert error.http_status == 500
    assert one_line(error) == KAFKA + "Could not describe topic 't1': boom"


def test_the_status_topic_is_not_the_config_log() -> None:
    status = InternalTopic("127.0.0.1:1", "st", property_name="status.storage.topic", client_id="w-status")
    error = status.error("Could not open status.storage.topic 'st'")
    assert not isinstance(error, ConfigLogError)
    assert error.topic == "st"
