"""Schemas, builders, structs and value validation behave as Connect's data API."""

from __future__ import annotations

import pytest

from engine.api.errors import DataException, SchemaBuilderException
from engine.data import Schema, SchemaBuilder, Struct, Type, validate_value
from engine.data.builder import OPTIONAL_STRING_SCHEMA


def person() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("person")
        .field("name", Schema.STRING_SCHEMA)
        .field("age", SchemaBuilder.int32().optional())
        .field("admin", SchemaBuilder.bool().default_value(False))
        .build()
    )


def test_builder_sets_attributes_and_fields_in_order() -> None:
    """Fields keep declaration order and index; attributes land on the built schema."""
    s = person()
    assert [(f.name, f.index) for f in s.fields] == [("name", 0), ("age", 1), ("admin", 2)]
    assert s.field("age") is not None
    assert s.field("missing") is None
    assert s.name == "person"
    assert not s.optional
    assert Schema(Type.STRING, optional=True) == OPTIONAL_STRING_SCHEMA
    assert repr(s) == "Schema{person:STRUCT}"


def test_equal_schemas_are_equal_and_hash_alike() -> None:
    """Two separately built identical schemas compare and hash equal; any difference breaks it."""
    assert person() == person()
    assert hash(person()) == hash(person())
    assert person() != SchemaBuilder.struct().name("person").build()
    assert SchemaBuilder.int8().default_value(1).build() != SchemaBuilder.bool().default_value(True).build()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SchemaBuilder.int32().field("a", Schema.INT32_SCHEMA), "Cannot create fields on type INT32"),
        (
            lambda: SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("a", Schema.INT32_SCHEMA),
            "Cannot create field because of field name duplication a",
        ),
        (lambda: SchemaBuilder.struct().field("", Schema.INT32_SCHEMA), "fieldName cannot be null."),
        (
            lambda: SchemaBuilder.int32().name("a").name("b"),
            "Invalid SchemaBuilder call: name has already been set.",
        ),
        (
            lambda: SchemaBuilder.int32().optional().required(),
            "Invalid SchemaBuilder call: optional has already been set.",
        ),
        (lambda: SchemaBuilder.int32().default_value("x"), "Invalid default value"),
        (lambda: SchemaBuilder.int8().default_value(300), "Invalid default value"),
        (lambda: SchemaBuilder.array(None), "valueSchema cannot be null."),
    ],
)
def test_builder_rejects_invalid_calls(build: object, message: str) -> None:
    """Each invalid builder call raises SchemaBuilderException with Kafka's message."""
    with pytest.raises(SchemaBuilderException, match=message):
        build()  # type: ignore[operator]


def test_accessors_raise_on_types_without_children() -> None:
    """Asking a primitive for fields or element schemas is a DataException, not None."""
    with pytest.raises(DataException, match="Cannot list fields on non-struct type"):
        _ = Schema.INT32_SCHEMA.fields
    with pytest.raises(DataException, match="Cannot look up key schema on non-map type"):
        _ = Schema.INT32_SCHEMA.key_schema
    with pytest.raises(DataException, match="non-array and non-map"):
        _ = Schema.STRING_SCHEMA.value_schema


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (Schema.INT32_SCHEMA, None, "Invalid value: null used for required value, schema type: INT32"),
        (Schema.INT32_SCHEMA, "1", "Invalid Java object for schema with type INT32: class str for value"),
        (Schema.INT32_SCHEMA, True, "with type INT32: class bool"),
        (Schema.INT16_SCHEMA, 40000, "out of range for schema type INT16"),
        (Schema.FLOAT64_SCHEMA, 1, "with type FLOAT64: class int"),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["a", 1], "for element of array value"),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(),
            {"a": "b"},
            "for value of map value",
        ),
    ],
)
def test_validate_value_rejects_mismatches(schema: Schema, value: object, message: str) -> None:
    """Mismatched values raise DataException naming the schema type and the location."""
    with pytest.raises(DataException, match=message):
        validate_value(schema, value)


def test_validate_value_accepts_matching_values() -> None:
    """Nested containers of the right types and nulls in optional schemas pass."""
    validate_value(
        SchemaBuilder.map(Schema.STRING_SCHEMA, SchemaBuilder.array(Schema.OPTIONAL_INT8_SCHEMA)).build(),
        {"a": [1, None, -128]},
    )
    validate_value(Schema.OPTIONAL_BYTES_SCHEMA, None)
    validate_value(Schema.BYTES_SCHEMA, bytearray(b"x"))


class TestStruct:
    def test_put_get_and_defaults(self) -> None:
        """Unset fields read as their default; put validates and chains."""
        s = Struct(person()).put("name", "ann").put("age", 31)
        assert s.get("name") == "ann"
        assert s.get("admin") is False
        assert s.get_without_default("admin") is None
        assert s.get(person().fields[1]) == 31
        s.validate()
        assert repr(s) == "Struct{name=ann,age=31}"

    def test_put_rejects_bad_values_and_unknown_fields(self) -> None:
        """Wrong types name the field; unknown names are invalid field names."""
        s = Struct(person())
        with pytest.raises(DataException, match='for field: "age"'):
            s.put("age", "x")
        with pytest.raises(DataException, match="nope is not a valid field name"):
            s.put("nope", 1)
        with pytest.raises(DataException, match="Not a struct schema"):
            Struct(Schema.INT32_SCHEMA)

    def test_validate_requires_required_fields(self) -> None:
        """A required field without default must be set before validate() passes."""
        with pytest.raises(DataException, match='null used for required field: "name"'):
            Struct(person()).validate()

    def test_equality(self) -> None:
        """Structs compare by schema and values."""
        assert Struct(person()).put("name", "a") == Struct(person()).put("name", "a")
        assert Struct(person()).put("name", "a") != Struct(person()).put("name", "b")

    def test_nested_struct_schema_must_match(self) -> None:
        """A struct in a struct field must have exactly that field's schema."""
        outer = SchemaBuilder.struct().field("p", person()).build()
        other = SchemaBuilder.struct().name("other").build()
        with pytest.raises(DataException, match="Struct schemas do not match"):
            Struct(outer).put("p", Struct(other))
