"""Confluent's ``confluent.field_meta`` field option (``confluent/meta.proto``: ``Meta.params``),
written into and read from a field's options as raw protobuf bytes, without generated code.

Java's ProtobufConverter keeps what proto3 cannot say in it: an INT8 or INT16 Connect field is an
``int32`` with ``params {key: "connect.type", value: "int8"}``. The option is extension 1088 of
``google.protobuf.FieldOptions``; a pool that does not know ``confluent/meta.proto`` keeps it as an
unknown field, which is why it is read here from the options' bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["CONNECT_TYPE", "META_EXTENSION", "META_FILE", "meta_option", "meta_params"]

META_FILE: Final = "confluent/meta.proto"
META_EXTENSION: Final = 1088
CONNECT_TYPE: Final = "connect.type"
_PARAMS: Final = 2  # Meta.params, map<string, string>


def varint(value: int) -> bytes:
    """Protobuf's base-128 varint (also the message indexes' encoding, zigzagged by the caller)."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _delimited(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def meta_option(params: Mapping[str, str]) -> bytes:
    """``FieldOptions`` bytes holding ``(confluent.field_meta) = {params: ...}``, to merge into options."""
    entries = b"".join(
        _delimited(_PARAMS, _delimited(1, key.encode()) + _delimited(2, value.encode()))
        for key, value in params.items()
    )
    return _delimited(META_EXTENSION, entries)


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    """(field number, value) of a message's bytes: length-delimited values as bytes, others as ints."""
    out: list[tuple[int, bytes | int]] = []
    pos = 0

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            byte = data[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    while pos < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, varint()))
        elif wire == 2:
            size = varint()
            out.append((number, data[pos : pos + size]))
            pos += size
        elif wire == 1:
            out.append((number, int.from_bytes(data[pos : pos + 8], "little")))
            pos += 8
        elif wire == 5:
            out.append((number, int.from_bytes(data[pos : pos + 4], "little")))
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire} in field options")
    return out


def meta_params(options: bytes) -> dict[str, str]:
    """``Meta.params`` of the ``confluent.field_meta`` option in serialized ``FieldOptions`` (``{}`` if none)."""
    if not options:
        return {}
    meta = b"".join(v for n, v in _fields(options) if n == META_EXTENSION and isinstance(v, bytes))
    params: dict[str, str] = {}
    for number, entry in _fields(meta):
        if number == _PARAMS and isinstance(entry, bytes):
            parts = dict(_fields(entry))
            key, value = parts.get(1, b""), parts.get(2, b"")
            if isinstance(key, bytes) and isinstance(value, bytes):
                params[key.decode()] = value.decode()
    return params
