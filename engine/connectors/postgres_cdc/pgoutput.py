"""Decoding ``pgoutput``'s binary messages, protocol version 1 (PostgreSQL's "Logical Replication
Message Formats" chapter): Begin, Commit, Relation, Insert, Update, Delete, Truncate.

Type and Origin messages carry nothing the records need and decode to ``None``; any other tag is
an error (a server speaking a newer protocol than we asked for must not be half understood).
Column values arrive in text form and are converted by type OID for the types JSON can carry
exactly (booleans, integers, floats); every other type stays its PostgreSQL text.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.api import ConnectException

# What Debezium puts where a value is not in the WAL (an unchanged TOASTed column of an UPDATE)
UNAVAILABLE = "__debezium_unavailable_value"

_PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_INT_TYPES = {20, 21, 23, 26}  # int8, int2, int4, oid
_FLOAT_TYPES = {700, 701}  # float4, float8
_BOOL = 16


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int  # the commit record's LSN: the transaction's position in the slot
    commit_ts: datetime
    xid: int


@dataclass(frozen=True, slots=True)
class Commit:
    commit_lsn: int
    end_lsn: int  # confirming the slot up to here releases the whole transaction
    commit_ts: datetime


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type_oid: int
    key: bool


@dataclass(frozen=True, slots=True)
class Relation:
    relid: int
    schema: str
    table: str
    replica_identity: str  # d default, n nothing, f full, i index
    columns: tuple[Column, ...]


@dataclass(frozen=True, slots=True)
class Change:
    """An insert, update or delete: ``old`` is the key ('K') or the whole old row ('O') when sent."""

    op: str  # "c", "u", "d" as Debezium names them
    relid: int
    old: tuple[Any, ...] | None
    old_kind: str | None
    new: tuple[Any, ...] | None


@dataclass(frozen=True, slots=True)
class Truncate:
    relids: tuple[int, ...]


Message = Begin | Commit | Relation | Change | Truncate


_INT16 = struct.Struct("!h")
_INT32 = struct.Struct("!i")
_UINT32 = struct.Struct("!I")
_INT64 = struct.Struct("!q")
_N, _U, _T, _B = ord("n"), ord("u"), ord("t"), ord("b")


class _Reader:
    """A cursor over one message (hot path: tuple data is read with precompiled structs, no copies of
    the message itself)."""

    __slots__ = ("_at", "_data")

    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0

    def byte(self) -> int:
        value = self._data[self._at]
        self._at += 1
        return value

    def int16(self) -> int:
        (value,) = _INT16.unpack_from(self._data, self._at)
        self._at += 2
        return int(value)

    def int32(self) -> int:
        (value,) = _INT32.unpack_from(self._data, self._at)
        self._at += 4
        return int(value)

    def uint32(self) -> int:
        (value,) = _UINT32.unpack_from(self._data, self._at)
        self._at += 4
        return int(value)

    def int64(self) -> int:
        (value,) = _INT64.unpack_from(self._data, self._at)
        self._at += 8
        return int(value)

    def string(self) -> str:
        end = self._data.index(0, self._at)
        value = self._data[self._at : end].decode()
        self._at = end + 1
        return value

    def timestamp(self) -> datetime:
        return _PG_EPOCH + timedelta(microseconds=self.int64())

    def tuple_data(self) -> tuple[Any, ...]:
        data, at = self._data, self._at
        (count,) = _INT16.unpack_from(data, at)
        at += 2
        values: list[Any] = []
        append, unpack = values.append, _INT32.unpack_from
        for _ in range(count):
            kind = data[at]
            at += 1
            if kind in (_T, _B):
                (length,) = unpack(data, at)
                at += 4
                append(data[at : at + length])
                at += length
            elif kind == _N:
                append(None)
            elif kind == _U:
                append(UNAVAILABLE)
            else:
                raise ConnectException(f"pgoutput: unknown tuple column kind {chr(kind)!r}")
        self._at = at
        return tuple(values)


def decode(data: bytes) -> Message | None:
    """One message; None for the kinds the records do not need (Type, Origin)."""
    reader = _Reader(data)
    tag = chr(reader.byte())
    if tag == "B":
        return Begin(reader.int64(), reader.timestamp(), reader.uint32())
    if tag == "C":
        reader.byte()  # flags, unused
        return Commit(reader.int64(), reader.int64(), reader.timestamp())
    if tag == "R":
        relid, schema, table = reader.uint32(), reader.string(), reader.string()
        identity = chr(reader.byte())
        columns = []
        for _ in range(reader.int16()):
            flags, name, type_oid = reader.byte(), reader.string(), reader.uint32()
            reader.int32()  # type modifier
            columns.append(Column(name, type_oid, bool(flags & 1)))
        return Relation(relid, schema, table, identity, tuple(columns))
    if tag == "I":
        relid = reader.uint32()
        reader.byte()  # 'N'
        return Change("c", relid, None, None, reader.tuple_data())
    if tag == "U":
        relid = reader.uint32()
        kind = chr(reader.byte())
        old = None
        old_kind = None
        if kind in ("K", "O"):
            old, old_kind = reader.tuple_data(), kind
            kind = chr(reader.byte())
        if kind != "N":
            raise ConnectException(f"pgoutput: malformed Update message (got {kind!r} where 'N' belongs)")
        return Change("u", relid, old, old_kind, reader.tuple_data())
    if tag == "D":
        relid = reader.uint32()
        kind = chr(reader.byte())
        return Change("d", relid, reader.tuple_data(), kind, None)
    if tag == "T":
        count = reader.int32()
        reader.byte()  # options (CASCADE, RESTART IDENTITY)
        return Truncate(tuple(reader.uint32() for _ in range(count)))
    if tag in ("Y", "O"):
        return None
    raise ConnectException(f"pgoutput: unexpected message type {tag!r} (protocol version 1 was requested)")


def row(relation: Relation, values: tuple[Any, ...], *, key_only: bool = False) -> dict[str, Any]:
    """Column name -> value; ``key_only`` keeps the replica identity's columns (the rest are null in a 'K' tuple)."""
    out: dict[str, Any] = {}
    for column, value in zip(relation.columns, values, strict=True):
        if key_only and not column.key:
            continue
        out[column.name] = _CONVERTERS.get(column.type_oid, _text)(value) if type(value) is bytes else value
    return out


def _text(raw: bytes) -> str:
    return raw.decode()


def _bool(raw: bytes) -> bool:
    return raw == b"t"


_CONVERTERS: dict[int, Any] = {
    **dict.fromkeys(_INT_TYPES, int),
    **dict.fromkeys(_FLOAT_TYPES, float),
    _BOOL: _bool,
}


def lsn_text(lsn: int) -> str:
    """PostgreSQL's ``X/Y`` form of an LSN."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)
