"""Record values to the plain Python rows ``spark.createDataFrame`` infers a schema from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.data import Struct


def to_row(value: Any) -> dict[str, Any] | None:
    """A top-level row: a dict (Struct fields or schemaless JSON keys), None for a tombstone.

    Null fields are left out, so a column that is null in a whole batch does not make Spark's
    schema inference fail; the column then comes back as null when batches are read together.
    A value that is not an object becomes ``{"value": v}``.
    """
    if value is None:
        return None
    if isinstance(value, Struct):
        fields = {f.name: _nested(value.get(f)) for f in value.schema.fields}
    elif isinstance(value, Mapping):
        fields = {str(k): _nested(v) for k, v in value.items()}
    else:
        fields = {"value": _nested(value)}
    return {k: v for k, v in fields.items() if v is not None}


def _nested(value: Any) -> Any:
    """Structs become Spark Rows (struct columns); schemaless objects stay dicts (map columns)."""
    if isinstance(value, Struct):
        from pyspark.sql import Row

        return Row(**{f.name: _nested(value.get(f)) for f in value.schema.fields})
    if isinstance(value, Mapping):
        return {k: _nested(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nested(v) for v in value]
    return value
