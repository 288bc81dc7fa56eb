"""Rows for ``createDataFrame``: ``to_row`` keeps what Spark can infer, ``schema_of`` infers exactly what Spark
would from every row (the sink passes it instead of letting Spark infer it row by row)."""

from __future__ import annotations

import asyncio
import datetime
import decimal
from typing import Any

import pytest
from pyspark.errors import PySparkTypeError, PySparkValueError
from pyspark.sql import Row

from engine.connectors.spark_sink.rows import schema_of, to_row
from engine.data.builder import SchemaBuilder
from engine.data.values import Struct
from engine.spark import SparkSupervisor

ADDRESS = SchemaBuilder.struct().field("city", SchemaBuilder.string().optional().build()).build()
PERSON = (
    SchemaBuilder.struct()
    .field("name", SchemaBuilder.string().build())
    .field("age", SchemaBuilder.int32().optional().build())
    .field("address", ADDRESS)
    .build()
)


def test_to_row_drops_nulls_and_keeps_nested_values_as_spark_infers_them() -> None:
    person = Struct(PERSON).put("name", "ada").put("address", Struct(ADDRESS).put("city", "London"))
    assert to_row(person) == {"name": "ada", "address": Row(city="London")}
    assert to_row({"a": 1, "b": None, 3: [1, {"x": (2, None)}], "m": {"k": None}}) == {
        "a": 1,
        "3": [1, {"x": [2, None]}],
        "m": {"k": None},
    }
    assert to_row(7) == {"value": 7}
    assert to_row(None) is None


BATCHES: list[list[dict[str, Any]]] = [
    [{"id": i, "name": f"n{i}", "amount": i * 0.5} for i in range(200)],
    # fields missing in some rows, in another order in others, added late
    [{"id": 1}, {"name": "b", "id": 2}, {"id": 3, "name": "c"}, {"id": 4, "late": True}],
    # nested: maps whose value types show up only in some rows, lists, Rows (structs), decimals, times
    [
        {"m": {"a": 1}},
        {"m": {"a": 1, "b": 2}},
        {"m": {"z": "s"}, "l": [1, 2]},
        {"l": []},
        {"l": [None, 3]},
        {"s": Row(x=1, y="a")},
        {"s": Row(x=2, y=None)},
        {"d": decimal.Decimal("1.5")},
        {"t": datetime.datetime(2026, 1, 1)},  # noqa: DTZ001 - a naive one on purpose
        {"t": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)},
        {"day": datetime.date(2026, 1, 1)},
        {"b": b"\x00"},
    ],
    # a null map value first, its type later; a number, then a string (Spark widens to string)
    [{"m": {"k": None}}, {"m": {"k": 1.5}}, {"n": 1}, {"n": 2}, {"n": "x"}, {"n": 3}],
]


@pytest.mark.parametrize("rows", BATCHES, ids=["flat", "sparse", "nested", "late-types"])
def test_schema_of_is_the_schema_spark_infers_from_every_row(rows: list[dict[str, Any]], spark: Any) -> None:
    assert schema_of(spark, rows) == spark.createDataFrame(rows).schema


def test_schema_of_on_spark_connect_is_the_schema_the_connect_client_infers(
    spark: Any, connect_supervisor: SparkSupervisor
) -> None:
    """The Connect client infers on its own (and sorts each dict first): the same rule, the same result."""
    remote = asyncio.run(connect_supervisor.session())
    for rows in BATCHES:
        assert schema_of(remote, rows) == remote.createDataFrame(rows).schema
    written = remote.createDataFrame(BATCHES[1], schema_of(remote, BATCHES[1]))
    assert sorted(map(tuple, written.select("id", "name", "late").collect())) == [
        (1, None, None),
        (2, "b", None),
        (3, "c", None),
        (4, None, True),
    ]


def test_schema_of_fails_as_spark_does(spark: Any) -> None:
    with pytest.raises(PySparkTypeError, match="CANNOT_MERGE_TYPE"):
        spark.createDataFrame([{"a": 1.5}, {"a": 1}])
    with pytest.raises(PySparkTypeError, match="CANNOT_MERGE_TYPE"):
        schema_of(spark, [{"a": 1.5}] * 50 + [{"a": 1}])
    with pytest.raises(PySparkValueError, match="CANNOT_DETERMINE_TYPE"):
        schema_of(spark, [{"a": []}, {"a": []}])
