"""The JsonConverter's fast path: per-schema envelopes and compiled codecs, cached as Connect caches
its schema conversions (``schemas.cache.size``).

Writing: the serialized ``{"schema":<schema JSON>,"payload":`` prefix is made once per Schema and the
payload's bytes (orjson over the tree the compiled writer makes) are spliced between it and ``}``,
where the generic path rebuilt and re-checked both for every record.

Reading: an envelope whose prefix is one seen before (and learnt after a generic read of a message
that starts with exactly the prefix we write for its schema) is read by slicing off the prefix,
msgspec over the payload and the compiled reader. A message starting with a known prefix has exactly
that schema JSON; it is an envelope of ``schema`` and ``payload`` alone exactly when the rest, less
the closing brace, is one JSON value, which msgspec checks.

Either way, None means "the generic path": it writes the same bytes or raises Kafka's error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec
import orjson

from engine.api.errors import DataException
from engine.converters.json_compiled import (
    Codec,
    Fallback,
    compile_reader,
    compile_writer,
    has_control_escape,
)
from engine.data.cache import LRUCache
from engine.data.schema import Schema, SchemaAndValue

__all__ = ["Envelopes"]

SCHEMA_START: Final = b'{"schema":'
PAYLOAD_KEY: Final = b',"payload":'
# Reading payloads: msgspec, not orjson. It reads integers of any size exactly (orjson makes those past 64
# bits floats, which needed a scan for 19-digit runs first: 1.1 us a record) and a 6-field payload in
# 360 ns to orjson's 540; its doubles are correctly rounded, as Jackson's BigDecimal then doubleValue
# gives. Whatever it refuses (NaN, lone surrogates, bad UTF-8) the generic path reads or rejects.
# Writing stays with orjson: 220 ns to msgspec's 270 for the same tree, and orjson.Fragment.
_DECODE: Final = msgspec.json.Decoder().decode
# what a compiled codec (or orjson or msgspec under it) raises for a value only the generic path handles right
NOT_COMPILED: Final = (Fallback, DataException, ValueError, TypeError, ArithmeticError)


def _always_fallback(value: Any) -> Any:
    raise Fallback


def _schemaless_read(node: Any) -> Any:
    """``{"schema":null}``'s payload: msgspec's parse is already the value (``jackson.loads_plain``)."""
    return node


class Envelopes:
    """One converter's compiled writers (Schema -> prefix, writer) and readers (prefix -> Schema, reader).

    Both are LRU caches of ``size`` entries. ``_last_*`` is the most recently used entry of each,
    found by identity without touching the LRU order, where it is already the newest.
    """

    def __init__(
        self,
        size: int,
        *,
        schemas_enabled: bool,
        decimal_numeric: bool,
        replace_null_with_default: bool,
        schema_json: Callable[[Schema], bytes],
        schema_of: Callable[[bytes], Schema | None],
    ) -> None:
        """``schema_json``: the converter's (cached) schema JSON; ``schema_of``: what a schema JSON reads as."""
        self._size = size
        self._schemas_enabled = schemas_enabled
        self._decimal_numeric = decimal_numeric
        self._replace_null = replace_null_with_default
        self._schema_json = schema_json
        self._schema_of = schema_of
        self._writers: LRUCache[Schema, tuple[bytes, Codec]] = LRUCache(size)
        self._readers: LRUCache[bytes, tuple[Schema | None, Codec]] = LRUCache(size)
        self._last_writer: tuple[Schema, bytes, Codec] | None = None
        self._last_reader: tuple[bytes, Schema | None, Codec] | None = None

    # -- writing --------------------------------------------------------------------------------

    def write(self, schema: Schema, value: Any) -> bytes | None:
        """The message (the payload alone without schemas) for ``value`` of ``schema``, or None."""
        last = self._last_writer
        if last is not None and last[0] is schema:
            prefix, write = last[1], last[2]
        else:
            entry = self._writers.get(schema)
            if entry is None:
                entry = self._compile_writer(schema)
                self._writers.put(schema, entry)
            prefix, write = entry
            if self._size > 0:
                self._last_writer = (schema, prefix, write)
        try:
            body = orjson.dumps(write(value))
        except NOT_COMPILED:
            return None
        if has_control_escape(body):
            return None
        if not self._schemas_enabled:
            return bytes(memoryview(body))  # sized to the value, not orjson's buffer (jackson.dumps_plain)
        return b"".join((prefix, body, b"}"))

    def _compile_writer(self, schema: Schema) -> tuple[bytes, Codec]:
        """``schema``'s envelope prefix (empty without schemas) and payload writer. A schema whose JSON
        or writer cannot be made gets a writer that always falls back, for the generic path's error."""
        try:
            write = compile_writer(schema, self._decimal_numeric, self._replace_null)
            prefix = SCHEMA_START + self._schema_json(schema) + PAYLOAD_KEY if self._schemas_enabled else b""
        except NOT_COMPILED:
            return b"", _always_fallback
        return prefix, write

    # -- reading --------------------------------------------------------------------------------

    def read(self, value: bytes) -> SchemaAndValue | None:
        """An envelope with a known prefix as Connect data, or None.

        The payload is sliced out as bytes: msgspec reads those faster than a memoryview slice.
        """
        last = self._last_reader
        if last is not None and value.startswith(last[0]):
            prefix, schema, read = last
        else:
            at = value.find(PAYLOAD_KEY)
            while at >= 0:  # the first match ends the schema JSON unless that JSON holds the key itself
                prefix = value[: at + len(PAYLOAD_KEY)]
                entry = self._readers.get(prefix)
                if entry is not None:
                    schema, read = entry
                    self._last_reader = (prefix, schema, read)
                    break
                at = value.find(PAYLOAD_KEY, at + 1)
            else:
                return None
        if not value.endswith(b"}"):
            return None
        try:
            return SchemaAndValue(schema, read(_DECODE(value[len(prefix) : -1])))
        except NOT_COMPILED:
            return None

    def learn(self, value: bytes, schema: Schema | None) -> None:
        """After the generic read of envelope ``value`` of ``schema``: when it starts with the prefix we
        write for ``schema``, remember that prefix with the schema its JSON reads as and a reader for it."""
        if self._size <= 0 or not value.startswith(SCHEMA_START):
            return
        try:
            schema_json = b"null" if schema is None else self._schema_json(schema)
            prefix = SCHEMA_START + schema_json + PAYLOAD_KEY
            if not value.startswith(prefix) or self._readers.get(prefix) is not None:
                return
            known = self._schema_of(schema_json)  # not ``schema``: a duplicate "schema" key may have set that
            read = _schemaless_read if known is None else compile_reader(known, self._replace_null)
        except NOT_COMPILED:
            return
        self._readers.put(prefix, (known, read))
