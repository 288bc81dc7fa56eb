"""Turning a ``transforms.<a>.type`` / ``predicates.<p>.type`` value into a class.

Connect loads these with ``Class.forName`` plus plugin aliases. Here a name may be:

* our dotted name, nested classes included: ``engine.transforms.cast.Cast.Value`` (or ``...:Cast.Value``);
* Kafka's name: ``org.apache.kafka.connect.transforms.Cast$Value``,
  ``org.apache.kafka.connect.transforms.predicates.TopicNameMatches``;
* the short alias: ``Cast$Value``, ``Filter``, ``TopicNameMatches`` (also ``Cast.Value``);
* an entry point name in ``connect_engine.transforms`` / ``connect_engine.predicates``;
* a full name or unambiguous alias known to the plugin registry;
* any importable dotted path (``mymodule.MyTransform``).

Built-in names map to import paths without touching entry points, so they resolve even in a
checkout whose entry points are stale.
"""

from __future__ import annotations

import inspect
from importlib.metadata import entry_points
from typing import Final, Literal

from engine.api.config_def import java_str
from engine.api.errors import ConfigException
from engine.api.transforms import Predicate, Transformation
from engine.plugins.classes import import_class
from engine.plugins.discovery import PluginType, process_registry

Kind = Literal["transformation", "predicate"]

KAFKA_TRANSFORMS_PACKAGE: Final = "org.apache.kafka.connect.transforms."
KAFKA_PREDICATES_PACKAGE: Final = "org.apache.kafka.connect.transforms.predicates."

_KEY_VALUE: Final = {
    "Cast": "cast",
    "ExtractField": "extract_field",
    "Flatten": "flatten",
    "HeaderFrom": "header_from",
    "HoistField": "hoist_field",
    "InsertField": "insert_field",
    "MaskField": "mask_field",
    "ReplaceField": "replace_field",
    "SetSchemaMetadata": "set_schema_metadata",
    "TimestampConverter": "timestamp_converter",
}
_SINGLE: Final = {
    "DropHeaders": "drop_headers",
    "Filter": "filter",
    "InsertHeader": "insert_header",
    "RegexRouter": "regex_router",
    "TimestampRouter": "timestamp_router",
    "ValueToKey": "value_to_key",
}

BUILTIN_TRANSFORMS: Final[dict[str, str]] = {
    **{
        f"{cls}${variant}": f"engine.transforms.{module}:{cls}.{variant}"
        for cls, module in _KEY_VALUE.items()
        for variant in ("Key", "Value")
    },
    **{cls: f"engine.transforms.{module}:{cls}" for cls, module in _SINGLE.items()},
}
"""Kafka's binary name (less the package) -> our ``module:qualname``; also the entry point names."""

BUILTIN_PREDICATES: Final[dict[str, str]] = {
    name: f"engine.transforms.predicates:{name}"
    for name in ("HasHeaderKey", "RecordIsTombstone", "TopicNameMatches")
}

_GROUPS: Final[dict[Kind, str]] = {
    "transformation": "connect_engine.transforms",
    "predicate": "connect_engine.predicates",
}
_BASES: Final[dict[Kind, type]] = {"transformation": Transformation, "predicate": Predicate}


def _builtin_path(name: str, kind: Kind) -> str | None:
    table = BUILTIN_TRANSFORMS if kind == "transformation" else BUILTIN_PREDICATES
    short = name
    for package in (KAFKA_PREDICATES_PACKAGE, KAFKA_TRANSFORMS_PACKAGE):
        if name.startswith(package):
            short = name[len(package) :]
            break
    return table.get(short) or table.get(short.replace(".", "$"))


def _entry_point_class(name: str, kind: Kind) -> type | None:
    for ep in entry_points(group=_GROUPS[kind]):
        if ep.name == name:
            try:
                loaded = ep.load()
            except Exception:  # a broken entry point is no class; the caller reports "not found"
                return None
            return loaded if isinstance(loaded, type) else None
    return None


def find_class(name: str, kind: Kind) -> type | None:
    """The class ``name`` means, or None when nothing by that name can be found (no type check)."""
    name = name.strip()
    if not name:
        return None
    builtin = _builtin_path(name, kind)
    if builtin is not None:
        return import_class(builtin)
    found = _entry_point_class(name, kind)
    if found is not None:
        return found
    desc = process_registry().resolve(name)
    wanted = PluginType.TRANSFORMATION if kind == "transformation" else PluginType.PREDICATE
    if desc is not None and desc.type is wanted:
        return desc.cls
    return import_class(name)


def check_concrete(cls: type, kind: Kind) -> None:
    """Kafka's ``Utils.ensureConcreteSubclass``, with its messages (our bases play the interfaces)."""
    base = _BASES[kind]
    if not issubclass(cls, base):
        raise ConfigException(f"Class {java_str(cls)} does not implement the {base.__name__} interface")
    if inspect.isabstract(cls):
        children = [
            f"{c.__module__}.{c.__qualname__}"
            for c in vars(cls).values()
            if isinstance(c, type) and issubclass(c, base) and not inspect.isabstract(c)
        ]
        message = "This class is abstract and cannot be created."
        if children:
            message += f" Did you mean {', '.join(children)}?"
        raise ConfigException(message)


def resolve_class(config_name: str, value: str, kind: Kind) -> type:
    """The concrete class for ``config_name=value``; ``ConfigException`` with Kafka's wording otherwise."""
    cls = find_class(value, kind)
    if cls is None:
        raise ConfigException(config_name, value, f"Class {value} could not be found.")
    check_concrete(cls, kind)
    return cls
