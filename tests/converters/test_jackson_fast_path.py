"""The schemaless JSON read fast path (orjson) gives what the exact path gives, or steps aside."""

from __future__ import annotations

import pytest

from engine.converters import jackson
from engine.converters.json_converter import JsonConverter


@pytest.fixture
def converter() -> JsonConverter:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, is_key=False)
    return converter


PLAIN = [
    b'{"id":1,"name":"a","amount":1.25,"active":true,"tags":["x",null]}',
    b"0.1",
    b"1E2",
    b"-0.0",
    b'{"a":1,"a":2}',
    b" [1, 2.5, null, true] ",
    b"1.7976931348623157e308",
    b"5e-324",
    b"123456789012345678",
    b'"caf\\u00e9 \\ud83d\\ude00"',
]
SLOW = [
    b"1e400",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1234567890123456789",
    b'"\\ud800"',
    b'\xef\xbb\xbf{"a":1}',
    b"NaN",
    b'"\xff"',
]


@pytest.mark.parametrize("raw", PLAIN)
def test_the_fast_path_reads_what_the_exact_path_reads(converter: JsonConverter, raw: bytes) -> None:
    fast = jackson.loads_plain(raw)
    assert fast is not jackson.NOT_PLAIN
    exact = converter._to_connect(None, jackson.loads(raw))
    assert repr(fast) == repr(exact)  # repr: -0.0 and 0.0 are equal, and types must match too
    assert converter.to_connect_data("t", raw).value == exact


@pytest.mark.parametrize("raw", SLOW)
def test_what_orjson_reads_differently_takes_the_exact_path(converter: JsonConverter, raw: bytes) -> None:
    assert jackson.loads_plain(raw) is jackson.NOT_PLAIN
    try:
        exact = converter._to_connect(None, jackson.loads(raw))
    except ValueError:
        with pytest.raises(Exception, match="serialization error"):
            converter.to_connect_data("t", raw)
        return
    assert repr(converter.to_connect_data("t", raw).value) == repr(exact)


# the write side: orjson's bytes are used only where they are Jackson's bytes
WRITTEN = [
    {"id": 1, "name": "customer-1", "amount": 1.25, "active": True, "none": None},
    {"nested": {"list": [1, 2.5, "x", None, False, {"deep": 0.001}]}},
    [1, "a", 0.0, -0.0],
    "plain",
    7,
    {"big": 2**63 - 1, "small": -(2**63)},
    {"unicode": "café 😀"},
    {"f": 9999999.5},
]
NOT_WRITTEN = [
    {"ctl": "a\x01b"},
    {"a\n": 1},
    {"nan": float("nan")},
    {"inf": float("inf")},
    {"e7": 1e7},
    {"tiny": 1e-4},
    {"big": 2**63},
    {"small": -(2**63) - 1},
    {1: "int key"},
    {"tuple": (1, 2)},
    {"deep": [{"x": [1e20]}]},
    [{"ctl": "\x1f"}],
    {"bytes": b"x"},
]


@pytest.mark.parametrize("value", WRITTEN)
def test_the_write_fast_path_writes_jacksons_bytes(value: object) -> None:
    fast = jackson.dumps_plain(value)
    assert fast is not None
    assert fast == jackson.dumps(value)
    assert type(fast) is bytes


@pytest.mark.parametrize("value", NOT_WRITTEN)
def test_what_orjson_writes_differently_takes_the_exact_path(value: object) -> None:
    assert jackson.dumps_plain(value) is None
