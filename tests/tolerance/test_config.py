from __future__ import annotations

import pytest

from engine.api.errors import ConfigException
from engine.tolerance import ErrorPolicy


def test_defaults_are_kafkas() -> None:
    policy = ErrorPolicy.from_config({})
    assert policy == ErrorPolicy(
        retry_timeout_ms=0,
        retry_delay_max_ms=60000,
        tolerance="none",
        log_enable=False,
        log_include_messages=False,
        dlq_topic="",
        dlq_replication_factor=3,
        dlq_context_headers=False,
    )


def test_every_key_parsed_trimmed_and_case_insensitive_booleans() -> None:
    policy = ErrorPolicy.from_config(
        {
            "errors.retry.timeout": " -1 ",
            "errors.retry.delay.max.ms": "5000",
            "errors.tolerance": "all",
            "errors.log.enable": "TRUE",
            "errors.log.include.messages": "true",
            "errors.deadletterqueue.topic.name": " dlq ",
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "True",
        }
    )
    assert policy == ErrorPolicy(-1, 5000, "all", True, True, "dlq", 1, True)
    assert policy.retries_forever


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("errors.retry.timeout", "soon"),
        ("errors.retry.delay.max.ms", "-1"),
        ("errors.tolerance", "ALL"),
        ("errors.tolerance", "some"),
        ("errors.log.enable", "yes"),
        ("errors.deadletterqueue.topic.replication.factor", "40000"),
        ("errors.deadletterqueue.context.headers.enable", "1"),
    ],
)
def test_bad_values_raise_config_exception(key: str, value: str) -> None:
    with pytest.raises(ConfigException, match=key.replace(".", r"\.")):
        ErrorPolicy.from_config({key: value})
