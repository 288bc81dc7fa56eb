"""Record values to the plain Python rows ``spark.createDataFrame`` takes, and the schema Spark infers for them."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from engine.data import Struct

# values whose inferred Spark type depends on their Python type alone
_PLAIN: frozenset[type] = frozenset(
    {type(None), str, int, float, bool, bytes, bytearray, decimal.Decimal, datetime.date}
)


def to_row(value: Any) -> dict[str, Any] | None:
    """A top-level row: a dict (Struct fields or schemaless JSON keys), None for a tombstone.

    Null fields are left out, so a column that is null in a whole batch does not make Spark's
    schema inference fail; the column then comes back as null when batches are read together.
    A value that is not an object becomes ``{"value": v}``.
    """
    if value is None:
        return None
    if isinstance(value, Struct):
        return {f.name: _nested(v) for f in value.schema.fields if (v := value.get(f)) is not None}
    if isinstance(value, Mapping):
        # the common case, a flat JSON object, without a call per field (put runs this for every record)
        return {
            k if type(k) is str else str(k): v if type(v) in _PLAIN else _nested(v)
            for k, v in value.items()
            if v is not None
        }
    return {"value": _nested(value)}


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


def schema_of(spark: Any, rows: list[dict[str, Any]]) -> Any:
    """The StructType ``spark.createDataFrame(rows)`` would infer, inferred from one row per shape.

    Spark infers a type for every row and merges them all, which is most of a bare write's Python time
    (profile in BENCHMARKS.md). The inferred type of a row is a function of its ``_shape``, and merging
    a type in again changes nothing, so inferring from the first row of each shape, in order, gives the
    same schema (field order and errors included) at a fraction of the cost. Spark infers it itself
    (``createDataFrame`` of those rows), reading the session's settings as it does for the whole batch.
    """
    seen: set[Any] = set()
    samples = []
    for row in rows:
        shape = tuple([(k, _shape(v)) for k, v in row.items()])
        if shape not in seen:
            seen.add(shape)
            samples.append(row)
    return spark.createDataFrame(samples).schema


class _Unique:
    """The shape of a value this module does not model: never equal to another, so its row is a sample."""

    __slots__ = ()


def _shape(value: Any) -> Any:
    """What Spark's type inference (``pyspark.sql.types._infer_type``) looks at in ``value``."""
    kind = type(value)
    if kind in _PLAIN:
        return kind
    if kind is datetime.datetime:
        return kind, value.tzinfo is None  # TIMESTAMP_NTZ sessions infer naive values as NTZ
    if kind is dict:
        return kind, tuple([(_shape(k), k if type(k) is str else None, _shape(v)) for k, v in value.items()])
    if kind is list:
        return kind, tuple([_shape(v) for v in value])
    if isinstance(value, tuple) and hasattr(value, "__fields__"):  # a pyspark Row
        return "row", tuple(value.__fields__), tuple([_shape(v) for v in value])
    return _Unique()
