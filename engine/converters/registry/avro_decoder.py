"""A record's Avro binary decoding generated per schema, in Python, from the bytes themselves.

fastavro's compiled reader reads its file object byte by byte (one ``read(1)`` call per varint
byte), then dispatches each value on its type name; for the records a converter reads (a flat
record of scalars, strings, a few logical types, a map) a function generated for the schema, with
each varint decoded inline from the ``bytes``, costs a fraction of that. It yields what fastavro
yields, value for value: the same varint and IEEE decoding, UTF-8 text, blocks of maps and arrays
(a negative count followed by a block size), nested records as dicts in field order, and logical
types through fastavro's own ``LOGICAL_READERS`` (the same Decimal context, the same datetimes).

Only what it can promise that for is generated: records, the primitives, ``[null, T]`` unions, maps,
arrays and logical types. A schema with anything else (enums, ``fixed``, other unions, named type
references) gets ``None``, and the converter reads it with fastavro. A record shorter than its
encoding says raises ``EOFError``, as fastavro's reader does.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["values_decoder"]

_PRIMITIVES: Final = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))


class _Unsupported(Exception):
    """A part of the schema this module does not generate code for."""


def values_decoder(
    parsed: Mapping[str, Any], logical_readers: Mapping[str, Any]
) -> Callable[[bytes], list[Any]] | None:
    """``decode(record)``: the field values of the top-level record ``parsed`` (fastavro's parsed form),
    in field order, from a record framed in Confluent's format (the Avro encoding from byte 5 on);
    ``None`` if the schema has a part only fastavro reads."""
    if parsed.get("type") not in ("record", "error"):
        return None
    generator = _Generator(logical_readers)
    try:
        lines = generator.record_values(parsed, "out", "    ")
    except _Unsupported:
        return None
    source = [
        "def decode(data):",
        "    if type(data) is not bytes:",
        "        data = bytes(data)",
        "    n = len(data)",
        "    pos = 5",
        "    try:",
        *("    " + line for line in lines),
        "    except (IndexError, struct_error):",
        "        raise EOFError(f'cannot read the Avro record: it ends at byte {n}') from None",
        "    return out",
    ]
    scope: dict[str, Any] = {"struct_error": struct.error, **generator.scope}
    exec("\n".join(source), scope)  # source built from type names, counters and repr()'d names only
    decode: Callable[[bytes], list[Any]] = scope["decode"]
    return decode


class _Generator:
    def __init__(self, logical_readers: Mapping[str, Any]) -> None:
        self.logical_readers = logical_readers
        self.scope: dict[str, Any] = {
            "float_at": struct.Struct("<f").unpack_from,
            "double_at": struct.Struct("<d").unpack_from,
        }
        self.counter = 0

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def record_values(self, record: Mapping[str, Any], target: str, indent: str) -> list[str]:
        """Lines setting ``target`` to the list of ``record``'s field values."""
        lines: list[str] = []
        names = []
        for field in record["fields"]:
            name = self._name("f")
            lines += self.value(field["type"], name, indent)
            names.append(name)
        return [*lines, f"{indent}{target} = [{', '.join(names)}]"]

    def value(self, schema: Any, target: str, indent: str) -> list[str]:
        """Lines decoding one value of ``schema`` at ``pos`` into ``target``, ``pos`` moved past it."""
        if isinstance(schema, str):
            if schema not in _PRIMITIVES:
                raise _Unsupported(schema)  # a named type's reference
            return self._primitive(schema, target, indent)
        if isinstance(schema, list):
            return self._optional(schema, target, indent)
        if not isinstance(schema, Mapping):
            raise _Unsupported(repr(schema))
        kind = schema.get("type")
        if "logicalType" in schema:
            if not isinstance(kind, str) or kind not in _PRIMITIVES:
                raise _Unsupported(f"logical type on {kind!r}")
            reader = self.logical_readers.get(f"{kind}-{schema['logicalType']}")
            lines = self._primitive(kind, target, indent)
            if reader is not None:  # fastavro's rule: an unknown logical type reads as its type
                fn, spec = self._name("logical"), self._name("spec")
                self.scope[fn], self.scope[spec] = reader, schema
                lines.append(f"{indent}{target} = {fn}({target}, {spec}, None)")
            return lines
        if kind in _PRIMITIVES:
            return self._primitive(kind, target, indent)
        if kind in ("record", "error"):
            values, item = self._name("values"), self._name("r")
            names = [field["name"] for field in schema["fields"]]
            lines = self.record_values(schema, values, indent)
            pairs = ", ".join(f"{name!r}: {values}[{i}]" for i, name in enumerate(names))
            return [*lines, f"{indent}{item} = {{{pairs}}}", f"{indent}{target} = {item}"]
        if kind == "map":
            return self._blocks(schema["values"], target, indent, is_map=True)
        if kind == "array":
            return self._blocks(schema["items"], target, indent, is_map=False)
        raise _Unsupported(repr(kind))

    def _optional(self, branches: list[Any], target: str, indent: str) -> list[str]:
        """``[null, T]`` or ``[T, null]``: the branch index, then T's value or nothing."""
        nulls = [i for i, b in enumerate(branches) if b == "null"]
        if len(branches) != 2 or len(nulls) != 1:
            raise _Unsupported("a union other than [null, T]")
        other = 1 - nulls[0]
        index = self._name("u")
        lines = self._long(index, indent)
        return [
            *lines,
            f"{indent}if {index} == {nulls[0]}:",
            f"{indent}    {target} = None",
            f"{indent}elif {index} == {other}:",
            *self.value(branches[other], target, indent + "    "),
            f"{indent}else:",
            f"{indent}    raise IndexError({index})",
        ]

    def _blocks(self, item: Any, target: str, indent: str, *, is_map: bool) -> list[str]:
        """A map's or an array's blocks: a count (negative: a block size follows), items, until 0."""
        count, size, key, value, out = (self._name(p) for p in ("count", "size", "key", "item", "items"))
        body = indent + "    "
        lines = [f"{indent}{out} = {{}}" if is_map else f"{indent}{out} = []", *self._long(count, indent)]
        lines += [
            f"{indent}while {count} != 0:",
            f"{body}if {count} < 0:",
            f"{body}    {count} = -{count}",
            *self._long(size, body + "    "),
            f"{body}for _ in range({count}):",
        ]
        loop = body + "    "
        if is_map:
            lines += self._primitive("string", key, loop)
        lines += self.value(item, value, loop)
        lines.append(f"{loop}{out}[{key}] = {value}" if is_map else f"{loop}{out}.append({value})")
        lines += self._long(count, body)
        return [*lines, f"{indent}{target} = {out}"]

    def _primitive(self, kind: str, target: str, indent: str) -> list[str]:
        if kind == "null":
            return [f"{indent}{target} = None"]
        if kind == "boolean":
            return [f"{indent}{target} = data[pos] != 0", f"{indent}pos += 1"]
        if kind in ("int", "long"):
            return self._long(target, indent)
        if kind == "float":
            return [f"{indent}{target} = float_at(data, pos)[0]", f"{indent}pos += 4"]
        if kind == "double":
            return [f"{indent}{target} = double_at(data, pos)[0]", f"{indent}pos += 8"]
        # bytes and string: a length, then that many bytes (fastavro: EOFError if fewer are left)
        size, end = self._name("size"), self._name("end")
        taken = f"data[pos:{end}]" + (".decode()" if kind == "string" else "")
        return [
            *self._long(size, indent),
            f"{indent}{end} = pos + {size}",
            f"{indent}if {size} < 0 or {end} > n:",
            f"{indent}    raise IndexError({size})",
            f"{indent}{target} = {taken}",
            f"{indent}pos = {end}",
        ]

    def _long(self, target: str, indent: str) -> list[str]:
        """A zig-zag varint, inline: one byte for small values, a loop for the rest."""
        return [
            f"{indent}b = data[pos]",
            f"{indent}pos += 1",
            f"{indent}if b < 128:",
            f"{indent}    {target} = (b >> 1) ^ -(b & 1)",
            f"{indent}else:",
            f"{indent}    v = b & 127",
            f"{indent}    shift = 7",
            f"{indent}    while True:",
            f"{indent}        b = data[pos]",
            f"{indent}        pos += 1",
            f"{indent}        v |= (b & 127) << shift",
            f"{indent}        shift += 7",
            f"{indent}        if b < 128:",
            f"{indent}            break",
            f"{indent}    {target} = (v >> 1) ^ -(v & 1)",
        ]
