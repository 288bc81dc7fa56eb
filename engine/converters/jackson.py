"""Writing and reading JSON byte-for-byte as Kafka's Jackson ``ObjectMapper`` does.

Why not ``json.dumps``: Jackson writes no spaces, keeps non-ASCII as raw UTF-8, escapes other
control characters as ``\\u00XX`` with *upper-case* hex, prints doubles with Java's
``Double.toString`` (``1.0E10``, ``1.0E-4``) and floats with ``Float.toString``, writes
non-finite numbers as the strings ``"NaN"``/``"Infinity"`` and ``BigDecimal`` with
``toString()``. A tree here is ``None``/``bool``/``int``/``float``/``Float32``/``Decimal``/
``str``/``bytes`` (base64, as a binary node)/``list``/``dict``.

Reading keeps integers as ``int`` and other numbers as exact ``Decimal`` (Kafka's
``USE_BIG_DECIMAL_FOR_FLOATS``) and rejects ``NaN``/``Infinity`` tokens as Jackson does.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
import struct
from typing import Any, Final

import orjson

from engine.api.config_def import java_str

__all__ = ["Float32", "dumps", "dumps_plain", "java_float_str", "loads", "round_float32"]


class Float32(float):
    """A float to be written as Java's ``Float.toString`` would write a ``float``."""

    __slots__ = ()


_ESCAPES: Final[dict[int, str]] = {
    **{c: f"\\u{c:04X}" for c in range(0x20)},
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    ord('"'): '\\"',
    ord("\\"): "\\\\",
}


def _quote(text: str) -> str:
    return '"' + text.translate(_ESCAPES) + '"'


def round_float32(x: float) -> float:
    """The float32 nearest ``x`` (``(float) x`` in Java); out-of-range values become infinities."""
    try:
        rounded: float = struct.unpack(">f", struct.pack(">f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return rounded


def java_float_str(x: float) -> str:
    """``Float.toString``: the shortest digits that read back as the same float32, Java layout."""
    f = round_float32(x)
    if not math.isfinite(f) or f == 0:
        return java_str(f)
    for digits in range(1, 10):
        text = f"{f:.{digits - 1}e}"
        if round_float32(float(text)) == f:
            return java_str(float(text))
    return java_str(f)  # pragma: no cover - nine digits always round-trip a float32


def _number(x: float) -> str:
    text = java_float_str(x) if isinstance(x, Float32) else java_str(x)
    return text if math.isfinite(x) else _quote(text)


def _decimal(d: decimal.Decimal) -> str:
    return str(abs(d)) if d.is_zero() else str(d)  # BigDecimal has no negative zero


def _write(node: Any, out: list[str]) -> None:
    if node is None:
        out.append("null")
    elif node is True:
        out.append("true")
    elif node is False:
        out.append("false")
    elif isinstance(node, str):
        out.append(_quote(node))
    elif isinstance(node, int):
        out.append(str(node))
    elif isinstance(node, float):
        out.append(_number(node))
    elif isinstance(node, decimal.Decimal):
        out.append(_decimal(node))
    elif isinstance(node, bytes | bytearray | memoryview):
        out.append('"' + base64.b64encode(bytes(node)).decode("ascii") + '"')
    elif isinstance(node, dict):
        out.append("{")
        for i, (key, value) in enumerate(node.items()):
            if i:
                out.append(",")
            out.append(_quote(key))
            out.append(":")
            _write(value, out)
        out.append("}")
    elif isinstance(node, list):
        out.append("[")
        for i, value in enumerate(node):
            if i:
                out.append(",")
            _write(value, out)
        out.append("]")
    else:
        raise TypeError(f"not a JSON tree node: {type(node)!r}")


def dumps(node: Any) -> bytes:
    """Serialize a tree as Jackson would (UTF-8; lone surrogates raise ``UnicodeEncodeError``)."""
    out: list[str] = []
    _write(node, out)
    return "".join(out).encode("utf-8")


_CONTROL_SEARCH = re.compile("[\x00-\x1f]").search
_INT64 = (-(1 << 63), 1 << 63)


def _plain_scalar(node: Any, kind: type) -> bool | None:
    """``_plain`` for a scalar; None for a container or a type orjson may write differently."""
    if kind is str:
        return _CONTROL_SEARCH(node) is None
    if kind is int:
        return bool(_INT64[0] <= node < _INT64[1])
    if node is None or kind is bool:
        return True
    if kind is float:
        return bool(node == 0.0 or 1e-3 <= abs(node) < 1e7)
    return None


def _plain(node: Any) -> bool:
    """Whether orjson writes ``node`` exactly as Jackson does: no control characters in strings (their
    escapes differ in case), int64 integers, and doubles Java prints without an exponent.

    A loop, not ``all()`` over a generator: this runs for every schemaless value a source writes.
    """
    kind = type(node)
    if kind is dict:  # the common case, a flat record: scalars checked inline
        for key, value in node.items():
            if type(key) is not str or _CONTROL_SEARCH(key) is not None:
                return False
            kind = type(value)
            if kind is str:
                if _CONTROL_SEARCH(value) is not None:
                    return False
            elif kind is int:
                if not _INT64[0] <= value < _INT64[1]:
                    return False
            elif kind is float:
                if not (value == 0.0 or 1e-3 <= abs(value) < 1e7):
                    return False
            elif value is not None and kind is not bool and not _plain(value):
                return False
        return True
    if kind is list:
        for value in node:
            scalar = _plain_scalar(value, type(value))
            if scalar is False or (scalar is None and not _plain(value)):
                return False
        return True
    return bool(_plain_scalar(node, kind))


def dumps_plain(node: Any) -> bytes | None:
    """``dumps`` through orjson for the common schemaless tree; None when only ``dumps`` gets it right.

    The fast path of the JSON converter: one validating walk and a C encoder instead of two
    Python passes.
    """
    if not _plain(node):
        return None
    try:
        encoded = orjson.dumps(node)
    except (TypeError, orjson.JSONEncodeError):  # e.g. a lone surrogate: let dumps raise its error
        return None
    # a copy sized to the value: orjson's own bytes keep its ~1 KiB write buffer, and a batch of them
    # held until the topic has them cost 2.6 us each to allocate (0.4 us with the copy; bench/data_plane.py)
    return bytes(memoryview(encoded))


def _reject_constant(token: str) -> Any:
    raise ValueError(
        f"Non-standard token '{token}': enable JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS to allow"
    )


_LONG_DIGITS = re.compile(rb"\d{19}")
NOT_PLAIN: Any = object()  # what ``loads_plain`` returns when only ``loads`` reads the input right


def loads_plain(data: bytes) -> Any:
    """A schemaless Connect value straight from orjson, or ``NOT_PLAIN``.

    The fast path of the JSON converter without schemas: orjson parses floats to the same
    (correctly rounded) doubles ``loads`` reaches through ``Decimal``, and builds the same dicts,
    lists, ints, strings and bools. What it refuses (non-UTF-8 encodings, a BOM, lone surrogates,
    non-numeric constants) goes the slow way, which accepts it or raises Jackson's error; so does
    any run of 19 digits, as orjson turns an integer beyond 64 bits into a float.
    """
    if _LONG_DIGITS.search(data) is not None:
        return NOT_PLAIN
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return NOT_PLAIN


def loads(data: bytes) -> Any:
    """Parse JSON bytes (UTF-8/16/32 detected as Jackson does); raises ``ValueError``."""
    return json.loads(data, parse_float=decimal.Decimal, parse_constant=_reject_constant)
