"""Reading request bodies and query parameters the way Connect's JAX-RS stack (Jersey + Jackson) does.

Connect binds bodies to typed Java objects: a config is a ``Map<String, String>``, a create request a
``CreateConnectorRequest``. Jackson turns a JSON scalar into its text (``1.50`` stays ``"1.50"``,
``true`` becomes ``"true"``), keeps ``null``, and refuses an object or an array where a string
belongs, or a field the class does not have; Connect answers those refusals 500 with Jackson's
message. Jackson's message ends with a parser location (``at [Source: ...; line: 1, column: 9]``) that
says nothing to a client, so ours ends at the reference chain that names the offending key.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from engine.rest.errors import RestError, json_error_message

STRING = "java.lang.String"
STRING_MAP = "java.util.LinkedHashMap<java.lang.String,java.lang.String>"
CREATE_REQUEST = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest"
CREATE_REQUEST_FIELDS = (
    "name",
    "config",
    "initial_state",
    "initial_offsets",
)  # in the order Jackson lists them


class JsonNumber(str):
    """A JSON number kept as its source text, which is what Jackson hands a ``String`` target."""

    __slots__ = ()


def _non_standard(token: str) -> Any:
    raise RestError(
        500, f"Non-standard token '{token}': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow"
    )


async def json_body(request: web.Request, *, numbers_as_text: bool = False) -> Any:
    """The parsed body; malformed JSON is a 500, as Jackson's errors are in Connect.

    ``numbers_as_text`` keeps numbers as ``JsonNumber`` text, for bodies bound to Java strings.
    """
    text = _utf8(await request.read())
    if not text.strip():
        return None
    number: Any = JsonNumber if numbers_as_text else None
    try:
        return json.loads(text, parse_int=number, parse_float=number, parse_constant=_non_standard)
    except json.JSONDecodeError as exc:
        raise RestError(500, json_error_message(exc)) from None


def _utf8(data: bytes) -> str:
    """Connect reads bodies as UTF-8 whatever the Content-Type says; bytes that are not answer
    Jackson's ``Invalid UTF-8 start byte 0x..`` / ``middle byte`` 500."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "invalid continuation byte" and exc.end < len(data):
            message = f"Invalid UTF-8 middle byte 0x{data[exc.end]:x}"
        elif exc.reason == "unexpected end of data":
            message = "Unexpected end-of-input in a UTF-8 character"
        else:
            message = f"Invalid UTF-8 start byte 0x{data[exc.start]:x}"
        raise RestError(500, message) from None


def query_flag(request: web.Request, name: str) -> bool:
    """``Boolean.valueOf``: only a case-insensitive "true" is true; absent is false."""
    return request.query.get(name, "false").strip().lower() == "true"


def _token(value: Any) -> tuple[str, str]:
    """Jackson's description and ``JsonToken`` of the value a JSON parser is looking at."""
    if isinstance(value, dict):
        return "Object value", "START_OBJECT"
    if isinstance(value, list):
        return "Array value", "START_ARRAY"
    if isinstance(value, bool):
        return "Boolean value", "VALUE_TRUE" if value else "VALUE_FALSE"
    if isinstance(value, float) or (isinstance(value, JsonNumber) and any(ch in value for ch in ".eE")):
        return "Floating-point value", "VALUE_NUMBER_FLOAT"
    if isinstance(value, int | JsonNumber):
        return "Integer value", "VALUE_NUMBER_INT"
    if value is None:
        return "Null value", "VALUE_NULL"
    return "String value", "VALUE_STRING"


def mismatch(target: str, value: Any, chain: list[str]) -> RestError:
    """Jackson's ``MismatchedInputException``: 500 ``Cannot deserialize value of type `T` from ...``."""
    shape, token = _token(value)
    where = f" (through reference chain: {'->'.join(chain)})" if chain else ""
    return RestError(
        500, f"Cannot deserialize value of type `{target}` from {shape} (token `JsonToken.{token}`){where}"
    )


def json_string(value: Any, chain: list[str]) -> str | None:
    """A JSON value bound to a Java ``String``: scalars as their text, null as null, else a 500."""
    if value is None or isinstance(value, str):
        return None if value is None else str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise mismatch(STRING, value, chain)


def string_map(body: Any, chain: list[str] | None = None) -> dict[str, Any]:
    """Connect's ``Map<String, String>`` config: scalar values as text, null kept (validation reports it),
    an object or array anywhere a 500 naming the key."""
    chain = chain or []
    if not isinstance(body, dict):
        raise mismatch(STRING_MAP, body, chain)
    return {
        key: json_string(value, [*chain, f'java.util.LinkedHashMap["{key}"]']) for key, value in body.items()
    }


def create_request(body: Any) -> tuple[str, dict[str, Any], Any]:
    """``CreateConnectorRequest``: the trimmed name ("" when absent), the config and ``initial_state``.

    A field it does not declare is Jackson's ``UnrecognizedPropertyException`` (500), as in Connect.
    """
    if not isinstance(body, dict):
        raise mismatch(CREATE_REQUEST, body, [])
    for field in body:
        if field not in CREATE_REQUEST_FIELDS:
            known = ", ".join(f'"{name}"' for name in CREATE_REQUEST_FIELDS)
            raise RestError(
                500,
                f'Unrecognized field "{field}" (class {CREATE_REQUEST}), not marked as ignorable '
                f"({len(CREATE_REQUEST_FIELDS)} known properties: {known}]) (through reference "
                f'chain: {CREATE_REQUEST}["{field}"])',
            )
    name = json_string(body.get("name"), [f'{CREATE_REQUEST}["name"]'])
    initial_state = _initial_state(body.get("initial_state"))
    raw_config = body.get("config")
    if raw_config is None:  # Connect reads the name out of the missing config: a NullPointerException
        raise RestError(500, NULL_CONFIG)
    config = string_map(raw_config, [f'{CREATE_REQUEST}["config"]'])
    return ("" if name is None else name.strip()), config, initial_state


NULL_CONFIG = 'Cannot invoke "java.util.Map.get(Object)" because "connectorConfig" is null'
INITIAL_STATE = f"{CREATE_REQUEST}$InitialState"
INITIAL_STATES = ("RUNNING", "PAUSED", "STOPPED")


def _initial_state(value: Any) -> str | None:
    """``CreateConnectorRequest.InitialState.forValue``: any case; anything else is Jackson's 500."""
    if value is None:
        return None
    chain = [f'{CREATE_REQUEST}["initial_state"]']
    text = json_string(value, chain)
    assert text is not None
    if text.upper() not in INITIAL_STATES:
        raise RestError(
            500,
            f"Cannot construct instance of `{INITIAL_STATE}`, problem: No enum constant "
            f"{INITIAL_STATE.replace('$', '.')}.{text.upper()} (through reference chain: "
            f"{chain[0]})",
        )
    return text.upper()
