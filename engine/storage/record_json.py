"""JSON read from an internal topic (config, status, offsets), within Jackson's bounds.

Anyone who can write to those topics can put any bytes there, and a compacted topic keeps them: a
record that crashes its reader stops every worker, again after each restart. Connect's Jackson
refuses nesting past 1,000 levels (``StreamReadConstraints``); Python's parser recurses and raises
``RecursionError``, which is no ``ValueError``. ``loads`` refuses the same depth with a
``ValueError``, so readers skip such a record as they skip any other malformed one.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 1000  # Jackson's StreamReadConstraints.DEFAULT_MAX_DEPTH

_OPENING = frozenset(b"[{")
_CLOSING = frozenset(b"]}")
_QUOTE, _BACKSLASH = ord('"'), ord("\\")


def _depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects, strings skipped."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSING:
            depth -= 1
    return deepest


def loads(raw: bytes | str) -> Any:
    """``json.loads``, refusing (``ValueError``) nesting deeper than ``MAX_DEPTH``."""
    data = raw.encode() if isinstance(raw, str) else raw
    # fast path: with no more brackets than the limit, the nesting cannot pass it
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data)
    except RecursionError:  # within Jackson's bound but past this interpreter's stack
        raise ValueError("JSON nested too deeply for Python's parser") from None
