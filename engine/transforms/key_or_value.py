"""The part Kafka's ``$Key``/``$Value`` transforms share: which half of the record they work on.

A transform subclasses ``KeyOrValue`` once; ``key_and_value_variants`` makes the two concrete
classes, published as ``<Transform>.Key`` / ``<Transform>.Value`` (Kafka's ``Cast$Key``).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation
from engine.data.schema import Schema

T = TypeVar("T", bound="KeyOrValue")


class KeyOrValue(Transformation[ConnectRecord]):
    """Reads and replaces the key (``is_key``) or the value of a record."""

    is_key: ClassVar[bool] = False

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema if self.is_key else record.value_schema  # type: ignore[no-any-return]

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key if self.is_key else record.value

    def new_record(self, record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        if self.is_key:
            return record.new_record(key_schema=schema, key=value)
        return record.new_record(value_schema=schema, value=value)


def key_and_value_variants(base: type[T]) -> tuple[type[T], type[T]]:
    """``base.Key`` and ``base.Value``, named as Kafka names them (``Cast.Key`` is ``Cast$Key``)."""
    made = []
    for suffix, is_key in (("Key", True), ("Value", False)):
        variant = type(
            f"{base.__name__}{suffix}",
            (base,),
            {
                "is_key": is_key,
                "__module__": base.__module__,
                "__qualname__": f"{base.__name__}.{suffix}",
                "__doc__": f"{base.__name__} applied to the record's {suffix.lower()}.",
            },
        )
        variant.__name__ = suffix
        setattr(base, suffix, variant)
        made.append(variant)
    return made[0], made[1]
