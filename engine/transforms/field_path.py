"""KIP-821 field paths: Connect's ``FieldSyntaxVersion`` and ``SingleFieldPath``.

``field.syntax.version=V1`` (the default) names a top-level field, dots and all; ``V2`` reads a
dotted path into nested structs/maps, with backtick pairs around a step that holds dots
(```foo.bar`.baz``) and a backslash before a backtick that is part of a name. Parsing follows
Connect's ``SingleFieldPath`` character for character, so a path splits the same way in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from engine.api.config_def import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from engine.api.errors import ConfigException
from engine.data.schema import Field, Schema
from engine.transforms.schema_util import require_map_or_null, require_struct_or_null

__all__ = ["FIELD_SYNTAX_VERSION_CONFIG", "FieldSyntaxVersion", "SingleFieldPath"]

FIELD_SYNTAX_VERSION_CONFIG: Final = "field.syntax.version"
FIELD_SYNTAX_VERSION_DOC: Final = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to "
    "access the elements at the root level of the struct or map. If set to `V2`, the syntax will support "
    "accessing nested elements. To access nested elements, dotted notation is used. If dots are already "
    "included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to "
    'access the subfield `baz` from a field named "foo.bar" in a struct/map the following format can be used '
    'to access its elements: "`foo.bar`.baz".'
)
_NESTED: Final = "nested field access"


class FieldSyntaxVersion(StrEnum):
    """V1: root-level names only (before KIP-821); V2: dotted paths with backtick escaping."""

    V1 = "V1"
    V2 = "V2"

    @staticmethod
    def append_config_to(config_def: ConfigDef) -> ConfigDef:
        """``FieldSyntaxVersion.appendConfigTo``: add ``field.syntax.version`` to a transform's ConfigDef."""
        return config_def.define(
            FIELD_SYNTAX_VERSION_CONFIG,
            ConfigType.STRING,
            FieldSyntaxVersion.V1.value,
            CaseInsensitiveValidString.in_("V1", "V2"),
            Importance.HIGH,
            FIELD_SYNTAX_VERSION_DOC,
        )

    @staticmethod
    def from_config(parsed: Mapping[str, Any]) -> FieldSyntaxVersion:
        raw = parsed[FIELD_SYNTAX_VERSION_CONFIG]
        try:
            return FieldSyntaxVersion(str(raw).upper())
        except ValueError:
            raise ConfigException(
                FIELD_SYNTAX_VERSION_CONFIG, raw, "Unrecognized field syntax version"
            ) from None


def _incomplete_backtick(path: str, at: int) -> ConfigException:
    return ConfigException(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {at} to escape it"
    )


def _parse_v2(path: str) -> tuple[str, ...]:
    """``SingleFieldPath.buildFieldPathV2``."""
    steps: list[str] = []
    idx = 0
    while 0 <= idx < len(path):
        if path[idx] != "`":
            start = idx
            idx = path.find(".", idx)
            if idx >= 0:
                steps.append(path[start:idx])
                idx += 1
            else:
                steps.append(path[start:])
            continue
        backtick_at = idx
        idx += 1
        field: list[str] = []
        start = idx
        while True:
            idx = path.find("`", idx)
            if idx == -1:
                raise _incomplete_backtick(path, backtick_at)
            escaped = path[idx - 1] == "\\"
            if idx >= len(path) - 1:
                if escaped:
                    raise _incomplete_backtick(path, backtick_at)
                field.append(path[start:idx])
                steps.append("".join(field))
                idx += 1
                break
            if path[idx + 1] != ".":
                idx += 1
                continue
            if escaped:
                field.append(path[start : idx - 1] + "`")
                idx += 1
                start = idx
                continue
            field.append(path[start:idx])
            steps.append("".join(field))
            idx += 2
            break
    if path.endswith("."):
        steps.append("")
    return tuple(steps)


class SingleFieldPath:
    """One field, at the root (V1) or nested (V2), read from a schema, a Struct or a map."""

    __slots__ = ("steps", "version")

    def __init__(self, path: str, version: FieldSyntaxVersion) -> None:
        self.version = version
        self.steps: tuple[str, ...] = (path,) if version is FieldSyntaxVersion.V1 else _parse_v2(path)

    def field_from(self, schema: Schema | None) -> Field | None:
        """The field the path names in ``schema``; None where any step is missing."""
        if schema is None or not self.steps:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Any, with_default: bool = True) -> Any:
        """The value at the path in a Struct (the field's default when null, unless ``with_default`` is off)."""
        current = struct
        if current is None or not self.steps:
            return None
        for step in self.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), _NESTED)
            if current is None:
                return None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, mapping: Mapping[Any, Any] | None) -> Any:
        """The value at the path in a schemaless map; None where any step is missing."""
        current = mapping
        if current is None or not self.steps:
            return None
        for step in self.steps[:-1]:
            current = require_map_or_null(current.get(step), _NESTED)
            if current is None:
                return None
        return current.get(self.steps[-1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and other.steps == self.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.value}, path={'.'.join(self.steps)}}}"
