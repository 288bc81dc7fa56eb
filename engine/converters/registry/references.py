"""Schema references made self-contained: Avro named types and JSON Schema ``$ref``\\s that point into
other subjects are inlined, so the mappings (``AvroData``, ``JsonSchemaData``), fastavro and
jsonschema see one schema, as the registry's Java and Python clients see one after resolving them.

References arrive resolved (``RegistryConverter._references``): reference name -> schema text,
every schema a reference itself references included. In Avro the name is the referenced type's
full name (``com.example.Address``) and the main schema uses the type by name; in JSON Schema the
name is what ``$ref`` says (``address.json``, maybe with a ``#/...`` pointer into it).

A ``$ref`` cycle (a recursive JSON Schema) has no Connect schema: it is refused with a
``DataException`` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from engine.api.errors import DataException

__all__ = ["inline_avro", "inline_json_schema"]

_AVRO_PRIMITIVES: Final = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_AVRO_NAMED: Final = frozenset({"record", "error", "enum", "fixed"})


# -- Avro ------------------------------------------------------------------------------------------------


def inline_avro(schema: Any, references: Mapping[str, str]) -> Any:
    """``schema`` with each named type it uses from ``references`` defined where first used."""
    if not references:
        return schema
    known: dict[str, Any] = {}
    for text in references.values():
        _collect(json.loads(text), None, known)
    return _AvroInliner(known).expand(schema, None)


def _full_name(name: str, namespace: str | None) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


def _collect(node: Any, namespace: str | None, known: dict[str, Any]) -> None:
    """Every named type ``node`` declares, by full name, as written (with its enclosing namespace)."""
    if isinstance(node, list):
        for branch in node:
            _collect(branch, namespace, known)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind in _AVRO_NAMED:
        full = _full_name(str(node["name"]), node.get("namespace", namespace))
        known.setdefault(full, {**node, "name": full, "namespace": ""})
        inner = full.rpartition(".")[0] or None
        for field in node.get("fields") or ():
            _collect(field.get("type"), inner, known)
        return
    if kind == "array":
        _collect(node.get("items"), namespace, known)
    elif kind == "map":
        _collect(node.get("values"), namespace, known)
    elif isinstance(kind, dict | list):
        _collect(kind, namespace, known)


class _AvroInliner:
    def __init__(self, known: Mapping[str, Any]) -> None:
        self.known = known
        self.defined: set[str] = set()

    def expand(self, node: Any, namespace: str | None) -> Any:
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return node
            full = _full_name(node, namespace)
            if full not in self.defined and full in self.known:
                return self.expand(self.known[full], namespace)
            return full if full in self.known else node
        if isinstance(node, list):
            return [self.expand(branch, namespace) for branch in node]
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        if kind in _AVRO_NAMED:
            full = _full_name(str(node["name"]), node.get("namespace", namespace))
            self.defined.add(full)
            out = {k: v for k, v in node.items() if k != "namespace"}
            out["name"] = full
            if "." not in full:
                out["namespace"] = ""  # the null namespace, not the enclosing one
            inner = full.rpartition(".")[0] or None
            if "fields" in node:
                out["fields"] = [{**f, "type": self.expand(f.get("type"), inner)} for f in node["fields"]]
            return out
        if kind == "array":
            return {**node, "items": self.expand(node.get("items"), namespace)}
        if kind == "map":
            return {**node, "values": self.expand(node.get("values"), namespace)}
        if isinstance(kind, str | dict | list) and kind not in _AVRO_PRIMITIVES:
            return {**node, "type": self.expand(kind, namespace)}
        return node


# -- JSON Schema -----------------------------------------------------------------------------------------


def inline_json_schema(schema: Any, references: Mapping[str, str]) -> Any:
    """``schema`` with every ``$ref`` (to a reference, or a ``#/...`` pointer) replaced by its target."""
    documents = {name: json.loads(text) for name, text in references.items()}
    return _JsonInliner(documents).expand(schema, schema, [])


class _JsonInliner:
    def __init__(self, documents: Mapping[str, Any]) -> None:
        self.documents = documents

    def expand(self, node: Any, document: Any, trail: list[str]) -> Any:
        if isinstance(node, list):
            return [self.expand(item, document, trail) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            target_document, target = self._target(ref, document)
            if ref in trail:
                raise DataException(
                    f"the JSON Schema $ref {ref} refers to itself, which no Connect schema can"
                )
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            expanded = self.expand(target, target_document, [*trail, ref])
            return {**expanded, **siblings} if isinstance(expanded, dict) else expanded
        return {
            key: value if key in ("definitions", "$defs") else self.expand(value, document, trail)
            for key, value in node.items()
        }

    def _target(self, ref: str, document: Any) -> tuple[Any, Any]:
        uri, _, pointer = ref.partition("#")
        if uri:
            if uri not in self.documents:
                raise DataException(
                    f"the JSON Schema $ref {ref} names no schema reference (references: "
                    f"{', '.join(sorted(self.documents)) or 'none'})"
                )
            document = self.documents[uri]
        node = document
        for part in (p for p in pointer.split("/") if p):
            key = part.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError, TypeError):
                raise DataException(f"the JSON Schema $ref {ref} points at nothing") from None
        return document, node
