"""The data plane's worker keys refuse bad values in Connect's words at start."""

from __future__ import annotations

import pytest

from engine import Engine
from engine.errors import ConfigError


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("offset.flush.interval.ms", "abc", "Not a number of type LONG"),
        ("offset.flush.timeout.ms", "1.5", "Not a number of type LONG"),
        ("consumer.max.poll.records", "many", "Not a number of type INT"),
        ("offset.flush.interval.ms", "-1", "Value must be at least 0"),
    ],
)
def test_a_value_that_is_not_a_number_says_so(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Engine({key: value})
    assert str(raised.value) == f"Invalid value {value} for configuration {key}: {message}"
    assert raised.value.errors[key][0].endswith(message)
