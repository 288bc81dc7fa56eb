"""How a record is written in the journal and in segment files: one JSON object, bytes as base64.

``o`` (the offset) comes first, so a segment reader finds a line's offset without decoding the
rest of it.
"""

from __future__ import annotations

import base64
import json

from engine.topics.base import ConsumedRecord


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def record_body(record: ConsumedRecord) -> dict[str, object]:
    return {
        "o": record.offset,
        "ts": record.timestamp,
        "k": _b64(record.key),
        "v": _b64(record.value),
        "h": [[name, _b64(value)] for name, value in record.headers],
    }


def dump(body: object) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def record_line(record: ConsumedRecord) -> bytes:
    """A segment file's line: the record without its topic and partition (the directory names them)."""
    return dump(record_body(record)) + b"\n"


def parse_record(body: dict[str, object], topic: str, partition: int) -> ConsumedRecord:
    headers = body["h"]
    if not isinstance(headers, list):
        raise TypeError("headers are not a list")
    return ConsumedRecord(
        topic,
        partition,
        int(str(body["o"])),
        _unb64(_text(body["k"])),
        _unb64(_text(body["v"])),
        tuple((str(name), _unb64(_text(data))) for name, data in headers),
        int(str(body["ts"])),
    )


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected base64 text, got {type(value).__name__}")


def offset_of(line: bytes) -> int:
    """The offset of a segment line; the fast path reads the leading ``{"o":<digits>,``."""
    if line.startswith(b'{"o":'):
        end = line.find(b",", 5)
        if end > 5:
            return int(line[5:end])
    return int(json.loads(line)["o"])


def approximate_size(record: ConsumedRecord) -> int:
    """About what the record's segment line takes (base64 is 4/3), without encoding it."""
    raw = len(record.key or b"") + len(record.value or b"")
    if record.headers:
        raw += sum(len(name) + len(value or b"") for name, value in record.headers) + 9 * len(record.headers)
    return raw * 4 // 3 + 48
