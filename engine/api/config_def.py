"""Declared connector/plugin settings with Kafka's parsing, validation and REST shapes (``ConfigDef``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, StrEnum
from typing import Any, Final, Protocol, TypeAlias, runtime_checkable

import structlog

from engine.api.errors import ConfigException

_log = structlog.get_logger(component="config")

__all__ = [
    "NO_DEFAULT",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigDefError",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "LambdaValidator",
    "NonEmptyString",
    "NonNullValidator",
    "Password",
    "Range",
    "Recommender",
    "RecommenderFn",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
    "convert_to_string",
    "java_str",
    "parse_type",
]


# --------------------------------------------------------------------------------------------
# Enumerations, sentinel, Password, error
# --------------------------------------------------------------------------------------------


class ConfigType(StrEnum):
    """``ConfigDef.Type``; the values are the names Connect reports in ConfigKeyInfo."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"

    @property
    def is_sensitive(self) -> bool:
        return self is ConfigType.PASSWORD


class Importance(StrEnum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(StrEnum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class _NoDefault(Enum):
    NO_DEFAULT = "NO_DEFAULT"

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __str__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault.NO_DEFAULT
"""Default value meaning "no default": the key is required."""


class Password:
    """A secret string; prints as ``[hidden]`` everywhere, compares and hashes by value."""

    HIDDEN: Final = "[hidden]"
    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return Password.HIDDEN

    def __str__(self) -> str:
        return Password.HIDDEN

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Password):
            return self.value == other.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)


class ConfigDefError(ConfigException, ValueError):
    """A configuration is missing or invalid: the ``ConfigException`` ConfigDef raises.

    ``message`` is the full text; ``name`` the configuration it concerns, when known.
    """

    def __init__(self, message: str, *, name: str | None = None, value: Any = None) -> None:
        Exception.__init__(self, message)
        self.message = message
        self.name = name
        self.value = value

    @classmethod
    def invalid(cls, name: str, value: Any, detail: str | None = None) -> ConfigDefError:
        """``Invalid value <v> for configuration <name>[: <detail>]``, as Kafka words it."""
        text = f"Invalid value {java_str(value)} for configuration {name}"
        if detail:
            text += f": {detail}"
        return cls(text, name=name, value=value)


# --------------------------------------------------------------------------------------------
# Java-compatible string forms
# --------------------------------------------------------------------------------------------


def _java_double(x: float) -> str:
    """``Double.toString``: plain between 1e-3 and 1e7, else ``d.dddE<n>``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    tup = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(str(d) for d in tup.digits)
    exponent = int(tup.exponent)  # finite values only here
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped or "0"
    sci = len(digits) - 1 + exponent  # power of ten of the first digit
    if -3 <= sci < 7:
        if sci >= 0:
            whole = digits[: sci + 1].ljust(sci + 1, "0")
            frac = digits[sci + 1 :] or "0"
            return f"{sign}{whole}.{frac}"
        return f"{sign}0.{'0' * (-sci - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci}"


def _class_name(cls: type) -> str:
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def java_str(value: Any) -> str:
    """What Java's string concatenation would print for ``value`` (used in error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, type):
        return f"class {_class_name(value)}"
    return str(value)


def convert_to_string(value: Any, type_: ConfigType | None = None) -> str | None:
    """``ConfigDef.convertToString``: the string form Connect shows for a parsed value.

    ``None`` stays ``None``; lists join with ``,``; classes give their dotted name; passwords
    give ``[hidden]``. Without a type the form is inferred from the value.
    """
    if value is None:
        return None
    if isinstance(value, list | tuple) and type_ in (ConfigType.LIST, None):
        return ",".join(java_str(v) for v in value)
    if isinstance(value, type) and type_ in (ConfigType.CLASS, None):
        return _class_name(value)
    return java_str(value)


# --------------------------------------------------------------------------------------------
# Parsing (ConfigDef.parseType)
# --------------------------------------------------------------------------------------------

_JAVA_TRIM: Final = "".join(chr(c) for c in range(0x21))  # String.trim(): every char <= ' '
_COMMA_WITH_WHITESPACE: Final = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_INTEGER: Final = re.compile(r"[+-]?\d+")
_DECIMAL_DOUBLE: Final = re.compile(
    r"(?P<body>[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?))[fFdD]?"
)
_HEX_DOUBLE: Final = re.compile(
    r"(?P<body>[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?"
)
_INT_RANGES: Final[dict[ConfigType, tuple[int, int, str]]] = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1, "a 16-bit integer (short)"),
    ConfigType.INT: (-(2**31), 2**31 - 1, "a 32-bit integer"),
    ConfigType.LONG: (-(2**63), 2**63 - 1, "a 64-bit integer (long)"),
}


class _NotANumberError(Exception):
    pass


def _parse_java_integer(raw: str | int, low: int, high: int) -> int:
    if isinstance(raw, str):
        if _INTEGER.fullmatch(raw) is None:
            raise _NotANumberError
        raw = int(raw)
    if not low <= raw <= high:
        raise _NotANumberError
    return raw


def _parse_java_double(text: str) -> float:
    m = _DECIMAL_DOUBLE.fullmatch(text)
    if m is not None:
        return float(m.group("body"))
    m = _HEX_DOUBLE.fullmatch(text)
    if m is not None:
        return float.fromhex(m.group("body"))
    raise _NotANumberError


def _java_type_name(value: Any) -> str:
    return _class_name(type(value))


def parse_type(name: str, value: Any, type_: ConfigType) -> Any:
    """``ConfigDef.parseType``: turn a raw (usually string) value into the typed value.

    Strings are trimmed first (for every type). ``None`` stays ``None``. Already-typed values
    are accepted as Kafka accepts them (``bool`` for BOOLEAN, ``int`` for the integer types,
    numbers for DOUBLE, ``list``/``tuple`` for LIST, ``Password`` for PASSWORD, a class for
    CLASS). CLASS strings are kept as the dotted path; nothing is imported.
    """
    if value is None:
        return None
    trimmed = value.strip(_JAVA_TRIM) if isinstance(value, str) else None
    try:
        if type_ is ConfigType.BOOLEAN:
            if trimmed is not None:
                if trimmed.lower() == "true":
                    return True
                if trimmed.lower() == "false":
                    return False
            elif isinstance(value, bool):
                return value
            raise ConfigDefError.invalid(name, value, "Expected value to be either true or false")
        if type_ is ConfigType.PASSWORD:
            if isinstance(value, Password):
                return value
            if trimmed is not None:
                return Password(trimmed)
            raise ConfigDefError.invalid(
                name, value, f"Expected value to be a string, but it was a {_java_type_name(value)}"
            )
        if type_ is ConfigType.STRING:
            if trimmed is not None:
                return trimmed
            raise ConfigDefError.invalid(
                name, value, f"Expected value to be a string, but it was a {_java_type_name(value)}"
            )
        if type_ in _INT_RANGES:
            low, high, what = _INT_RANGES[type_]
            if trimmed is not None:
                return _parse_java_integer(trimmed, low, high)
            if isinstance(value, int) and not isinstance(value, bool):
                return _parse_java_integer(value, low, high)
            raise ConfigDefError.invalid(
                name, value, f"Expected value to be {what}, but it was a {_java_type_name(value)}"
            )
        if type_ is ConfigType.DOUBLE:
            if trimmed is not None:
                return _parse_java_double(trimmed)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
            raise ConfigDefError.invalid(
                name, value, f"Expected value to be a double, but it was a {_java_type_name(value)}"
            )
        if type_ is ConfigType.LIST:
            if isinstance(value, list | tuple):
                return list(value)
            if trimmed is not None:
                return [] if trimmed == "" else _COMMA_WITH_WHITESPACE.split(trimmed)
            raise ConfigDefError.invalid(name, value, "Expected a comma separated list.")
        if type_ is ConfigType.CLASS:
            if isinstance(value, type):
                return value
            if trimmed is not None:
                return trimmed
            raise ConfigDefError.invalid(name, value, "Expected a Class instance or class name.")
    except _NotANumberError:
        raise ConfigDefError.invalid(name, value, f"Not a number of type {type_}") from None
    raise ValueError(f"Unknown type {type_!r}.")


# --------------------------------------------------------------------------------------------
# Validators
# --------------------------------------------------------------------------------------------


@runtime_checkable
class Validator(Protocol):
    """``ConfigDef.Validator``: raise ``ConfigDefError`` when ``value`` is not acceptable.

    ``str(validator)`` is the "Valid Values" text shown in documentation.
    """

    def __call__(self, name: str, value: Any) -> None: ...


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Range:
    """Numeric bounds, inclusive: ``Range.at_least(1)`` prints ``[1,...]``."""

    __slots__ = ("max", "min")

    def __init__(self, min: float | None = None, max: float | None = None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        return cls(min, None)

    @classmethod
    def at_most(cls, max: float) -> Range:
        return cls(None, max)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        return cls(min, max)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigDefError.invalid(name, None, "Value must be non-null")
        if not _is_number(value):
            raise ConfigDefError.invalid(name, value, "Value must be a number")
        if self.min is not None and value < self.min:
            raise ConfigDefError.invalid(name, value, f"Value must be at least {java_str(self.min)}")
        if self.max is not None and value > self.max:
            raise ConfigDefError.invalid(name, value, f"Value must be no more than {java_str(self.max)}")

    def __str__(self) -> str:
        low = None if self.min is None else java_str(self.min)
        high = None if self.max is None else java_str(self.max)
        if low is None and high is None:
            return "[...]"
        if low is None:
            return f"[...,{high}]"
        if high is None:
            return f"[{low},...]"
        return f"[{low},...,{high}]"

    def __repr__(self) -> str:
        return f"Range({self})"


class ValidString:
    """One of a fixed set of strings, case-sensitive: prints ``[a, b]``."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings: tuple[str, ...] = tuple(valid_strings)

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidString:
        return cls(valid_strings)

    def __call__(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value not in self.valid_strings:
            raise ConfigDefError.invalid(
                name, value, "String must be one of: " + ", ".join(self.valid_strings)
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid_strings) + "]"

    def __repr__(self) -> str:
        return f"ValidString({self})"


class CaseInsensitiveValidString:
    """One of a fixed set of strings, ignoring case; the set is kept (and shown) upper-cased."""

    __slots__ = ("valid_strings",)

    def __init__(self, valid_strings: Iterable[str]) -> None:
        self.valid_strings: tuple[str, ...] = tuple(dict.fromkeys(s.upper() for s in valid_strings))

    @classmethod
    def in_(cls, *valid_strings: str) -> CaseInsensitiveValidString:
        return cls(valid_strings)

    def __call__(self, name: str, value: Any) -> None:
        if not isinstance(value, str) or value.upper() not in self.valid_strings:
            raise ConfigDefError.invalid(
                name, value, "String must be one of (case insensitive): " + ", ".join(self.valid_strings)
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid_strings) + "]"

    def __repr__(self) -> str:
        return f"CaseInsensitiveValidString({self})"


class NonEmptyString:
    """Rejects ``""`` (after trimming, so blank strings too); ``None`` passes."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if isinstance(value, str) and value == "":
            raise ConfigDefError.invalid(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"

    def __repr__(self) -> str:
        return "NonEmptyString()"


class NonNullValidator:
    """Rejects ``None``."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigDefError.invalid(name, None, "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"

    def __repr__(self) -> str:
        return "NonNullValidator()"


class ValidList:
    """``ConfigDef.ValidList`` as of Kafka 4.2 (KIP-1161): a LIST value whose elements are each one of a
    fixed set (case-sensitive), or any non-empty strings when the set is empty; never an empty element,
    never a duplicate (``ConfigDef.parse`` drops duplicates first, with Connect's warning). An empty
    list and ``None`` pass unless refused by ``empty_allowed`` and ``null_allowed``."""

    __slots__ = ("empty_allowed", "null_allowed", "valid_string")

    def __init__(
        self, valid_strings: Iterable[str], *, empty_allowed: bool = True, null_allowed: bool = True
    ) -> None:
        self.valid_string = ValidString(valid_strings)
        self.empty_allowed = empty_allowed
        self.null_allowed = null_allowed

    @classmethod
    def in_(cls, *valid_strings: str) -> ValidList:
        return cls(valid_strings)

    @classmethod
    def any_non_duplicate_values(cls, empty_allowed: bool, null_allowed: bool) -> ValidList:
        """``ValidList.anyNonDuplicateValues``: any non-empty, distinct strings."""
        return cls((), empty_allowed=empty_allowed, null_allowed=null_allowed)

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            if self.null_allowed:
                return
            raise ConfigDefError(f"Configuration '{name}' values must not be null.", name=name)
        if not isinstance(value, list | tuple):
            raise ConfigDefError.invalid(name, value, "Expected a comma separated list.")
        valid = self.valid_string.valid_strings
        if not value and not self.empty_allowed:
            allowed = str(self.valid_string) if valid else "any non-empty value"
            raise ConfigDefError(
                f"Configuration '{name}' must not be empty. Valid values include: {allowed}", name=name
            )
        if len(set(value)) != len(value):
            raise ConfigDefError(f"Configuration '{name}' values must not be duplicated.", name=name)
        for element in value:
            if isinstance(element, str) and element == "":
                raise ConfigDefError(f"Configuration '{name}' values must not be empty.", name=name)
            if valid:
                self.valid_string(name, element)

    def __str__(self) -> str:
        return str(self.valid_string) if self.valid_string.valid_strings else ""

    def __repr__(self) -> str:
        return f"ValidList({self})"


def _distinct(key: ConfigKey, value: Any) -> Any:
    """Kafka 4.2's ``ConfigDef.parseValue``: a ``ValidList`` key's duplicates are dropped, with its warning."""
    if not isinstance(key.validator, ValidList) or not isinstance(value, list):
        return value
    distinct = list(dict.fromkeys(value))
    if len(distinct) != len(value):
        _log.warning(
            "config.duplicate_values_removed",
            key=key.name,
            reason=f'Configuration key "{key.name}" contains duplicate values. Duplicates will be removed. '
            f"The original value is: {java_str(value)}, the updated value is: {java_str(distinct)}",
        )
    return distinct


class LambdaValidator:
    """A validator from a function ``fn(name, value)`` that raises ``ConfigDefError``."""

    __slots__ = ("description", "fn")

    def __init__(self, fn: Callable[[str, Any], None], description: str | Callable[[], str] = "") -> None:
        self.fn = fn
        self.description = description

    def __call__(self, name: str, value: Any) -> None:
        self.fn(name, value)

    def __str__(self) -> str:
        return self.description if isinstance(self.description, str) else self.description()

    def __repr__(self) -> str:
        return f"LambdaValidator({self})"


class CompositeValidator:
    """Runs several validators in order; prints their descriptions joined by ``, ``."""

    __slots__ = ("validators",)

    def __init__(self, validators: Iterable[Validator]) -> None:
        self.validators: tuple[Validator, ...] = tuple(validators)

    @classmethod
    def of(cls, *validators: Validator) -> CompositeValidator:
        return cls(validators)

    def __call__(self, name: str, value: Any) -> None:
        for validator in self.validators:
            validator(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)

    def __repr__(self) -> str:
        return f"CompositeValidator({self})"


class _PrefixStrippingValidator:
    """What ``ConfigDef.embed`` wraps a child's validator in: it sees the unprefixed name."""

    __slots__ = ("base", "prefix")

    def __init__(self, prefix: str, base: Validator) -> None:
        self.prefix = prefix
        self.base = base

    def __call__(self, name: str, value: Any) -> None:
        self.base(name.removeprefix(self.prefix), value)

    def __str__(self) -> str:
        return str(self.base)

    def __repr__(self) -> str:
        return repr(self.base)


# --------------------------------------------------------------------------------------------
# Recommenders
# --------------------------------------------------------------------------------------------


@runtime_checkable
class Recommender(Protocol):
    """``ConfigDef.Recommender``: valid values and visibility of a key given the other values."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool: ...


RecommenderFn: TypeAlias = Callable[[str, Mapping[str, Any]], list[Any]]
"""A plain function recommender: returns the valid values; the key is always visible."""


class _PrefixStrippingRecommender:
    __slots__ = ("base", "prefix")

    def __init__(self, prefix: str, base: Recommender | RecommenderFn) -> None:
        self.prefix = prefix
        self.base = base

    def _unprefixed(self, parsed: Mapping[str, Any]) -> dict[str, Any]:
        return {k.removeprefix(self.prefix): v for k, v in parsed.items() if k.startswith(self.prefix)}

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return _recommended_values(self.base, name.removeprefix(self.prefix), self._unprefixed(parsed))

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return _recommended_visible(self.base, name.removeprefix(self.prefix), self._unprefixed(parsed))


def _recommended_values(rec: Recommender | RecommenderFn, name: str, parsed: Mapping[str, Any]) -> list[Any]:
    if isinstance(rec, Recommender):
        return list(rec.valid_values(name, parsed))
    return list(rec(name, parsed))


def _recommended_visible(rec: Recommender | RecommenderFn, name: str, parsed: Mapping[str, Any]) -> bool:
    if isinstance(rec, Recommender):
        return bool(rec.visible(name, parsed))
    return True


# --------------------------------------------------------------------------------------------
# ConfigKey, ConfigValue
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigKey:
    """One defined setting. The default is parsed and validated when the key is built."""

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: list[str] = field(default_factory=list)
    recommender: Recommender | RecommenderFn | None = None
    internal: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "type", ConfigType(self.type))
        set_(self, "importance", Importance(self.importance))
        set_(self, "width", Width(self.width))
        set_(self, "dependents", list(self.dependents))
        if self.display_name is None:
            set_(self, "display_name", self.name)
        if self.default is not NO_DEFAULT:
            set_(self, "default", parse_type(self.name, self.default, self.type))
            if self.validator is not None:
                self.validator(self.name, self.default)

    @property
    def required(self) -> bool:
        """True iff the key has no default value."""
        return self.default is NO_DEFAULT

    def info(self, prefix: str = "") -> dict[str, Any]:
        """Connect's ConfigKeyInfo JSON object (its position in the group is ``order_in_group``, as 4.4 names it)."""
        required = self.required
        return {
            "name": prefix + self.name,
            "type": self.type.value,
            "required": required,
            "default_value": None if required else convert_to_string(self.default, self.type),
            "importance": self.importance.value,
            "documentation": self.documentation,
            "group": self.group,
            "order_in_group": self.order_in_group,  # Kafka 4.4 (a record); "order" in 4.1
            "width": self.width.value,
            "display_name": self.display_name,
            "dependents": list(self.dependents),
        }


@dataclass
class ConfigValue:
    """The outcome of validating one key: its parsed value (``None`` when unparseable), errors,
    recommended values and visibility. ``type`` (set by ``ConfigDef.validate``) selects the
    string form used by ``info()``; without it the form is inferred from the value."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True
    type: ConfigType | None = field(default=None, kw_only=True)

    def add_error_message(self, message: str) -> None:
        self.errors.append(message)

    def info(self) -> dict[str, Any]:
        """Connect's ConfigValueInfo JSON object; passwords show as ``[hidden]``."""
        rec_type = ConfigType.STRING if self.type is ConfigType.LIST else self.type
        return {
            "name": self.name,
            "value": convert_to_string(self.value, self.type),
            "recommended_values": [convert_to_string(v, rec_type) for v in self.recommended_values],
            "errors": list(self.errors),
            "visible": self.visible,
        }


# --------------------------------------------------------------------------------------------
# ConfigDef
# --------------------------------------------------------------------------------------------

_IMPORTANCE_ORDER: Final = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def _missing(name: str) -> str:
    return f'Missing required configuration "{name}" which has no default value.'


class ConfigDef:
    """The settings a plugin accepts: ``define`` them, then ``parse`` or ``validate`` props."""

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base is not None else {}
        self._groups: list[str] = list(base._groups) if base is not None else []

    def __repr__(self) -> str:
        return f"ConfigDef({list(self._keys)})"

    # -- definition ------------------------------------------------------------------------

    def define_key(self, key: ConfigKey) -> ConfigDef:
        """Add a built key; duplicate names raise ``ConfigDefError`` (a ``ValueError``)."""
        if key.name in self._keys:
            raise ConfigDefError(f"Configuration {key.name} is defined twice.", name=key.name)
        if key.group is not None and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def define(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        *,
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | RecommenderFn | None = None,
    ) -> ConfigDef:
        """Define a key and return ``self``. The default is parsed and validated now."""
        return self.define_key(
            ConfigKey(
                name=name,
                type=type,
                default=default,
                validator=validator,
                importance=importance,
                documentation=documentation,
                group=group,
                order_in_group=order_in_group,
                width=width,
                display_name=display_name,
                dependents=list(dependents),
                recommender=recommender,
            )
        )

    def define_internal(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.LOW,
        documentation: str = "",
    ) -> ConfigDef:
        """Define a key left out of generated documentation (``internal=True``)."""
        return self.define_key(
            ConfigKey(
                name=name,
                type=type,
                default=default,
                validator=validator,
                importance=importance,
                documentation=documentation,
                internal=True,
            )
        )

    @property
    def config_keys(self) -> dict[str, ConfigKey]:
        """Name -> key, in definition order (a copy)."""
        return dict(self._keys)

    def names(self) -> list[str]:
        return list(self._keys)

    @property
    def groups(self) -> list[str]:
        """Groups in the order their first key was defined (a copy)."""
        return list(self._groups)

    def default_values(self) -> dict[str, Any]:
        return {k.name: k.default for k in self._keys.values() if not k.required}

    def with_(self, other: ConfigDef) -> ConfigDef:
        """A new ConfigDef: this one's keys, then ``other``'s keys this one does not define."""
        merged = ConfigDef(self)
        for key in other._keys.values():
            if key.name not in merged._keys:
                merged.define_key(key)
        return merged

    merge = with_

    def embed(self, key_prefix: str, group_prefix: str, starting_ord: int, child: ConfigDef) -> ConfigDef:
        """Add ``child``'s keys under ``key_prefix`` (as Connect does for transforms/predicates).

        Groups become ``group_prefix`` or ``group_prefix: <group>``; orders count from
        ``starting_ord`` in ``child.sorted_configs()`` order; validators and recommenders see
        unprefixed names. Returns ``self``.
        """
        order = starting_ord
        for key in child.sorted_configs():
            self.define_key(
                ConfigKey(
                    name=key_prefix + key.name,
                    type=key.type,
                    default=key.default,
                    validator=None
                    if key.validator is None
                    else _PrefixStrippingValidator(key_prefix, key.validator),
                    importance=key.importance,
                    documentation=key.documentation,
                    group=group_prefix + ("" if key.group is None else f": {key.group}"),
                    order_in_group=order,
                    width=key.width,
                    display_name=key.display_name,
                    dependents=[key_prefix + d for d in key.dependents],
                    recommender=(
                        None
                        if key.recommender is None
                        else _PrefixStrippingRecommender(key_prefix, key.recommender)
                    ),
                    internal=key.internal,
                )
            )
            order += 1
        return self

    def sorted_configs(self) -> list[ConfigKey]:
        """Keys in documentation order: group, order in group, required first, importance, name."""
        group_ord = {g: i for i, g in enumerate(self._groups)}

        def sort_key(k: ConfigKey) -> tuple[int, int, int, int, str]:
            grp = -1 if k.group is None else group_ord.get(k.group, len(group_ord))
            return (grp, k.order_in_group, 0 if k.required else 1, _IMPORTANCE_ORDER[k.importance], k.name)

        return sorted(self._keys.values(), key=sort_key)

    # -- parsing ---------------------------------------------------------------------------

    def _key(self, key: ConfigKey | str) -> ConfigKey:
        if isinstance(key, ConfigKey):
            return key
        try:
            return self._keys[key]
        except KeyError:
            raise ConfigDefError(f"Unknown configuration {key}", name=key) from None

    def parse_value(self, key: ConfigKey | str, raw: Any) -> Any:
        """Parse one raw value by the key's type (no validator, no default handling)."""
        k = self._key(key)
        return parse_type(k.name, raw, k.type)

    parse_type = staticmethod(parse_type)
    convert_to_string = staticmethod(convert_to_string)

    def _undefined_dependents(self) -> list[str]:
        found: dict[str, None] = {}
        for key in self._keys.values():
            for dependent in key.dependents:
                if dependent not in self._keys:
                    found[dependent] = None
        return list(found)

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Every defined key, parsed and validated (defaults for absent keys).

        Raises ``ConfigDefError`` on the first missing required key or invalid value.
        """
        undefined = self._undefined_dependents()
        if undefined:
            raise ConfigDefError(
                "Some configurations in are referred in the dependents, but not defined: "
                + ",".join(undefined)
            )
        values: dict[str, Any] = {}
        for key in self._keys.values():
            if key.name in props:
                value = _distinct(key, parse_type(key.name, props[key.name], key.type))
            elif key.required:
                raise ConfigDefError(_missing(key.name), name=key.name)
            else:
                value = key.default
            if key.validator is not None:
                key.validator(key.name, value)
            values[key.name] = value
        return values

    # -- validation ------------------------------------------------------------------------

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """One ConfigValue per defined key (definition order), never raising for bad values.

        As in Kafka: an unparseable or missing value is ``None`` and the key's validator still
        runs on it (so it may add a second error); recommenders then run with every parsed
        value. Keys named as dependents but not defined get an invisible entry with an error.
        """
        results: dict[str, ConfigValue] = {
            name: ConfigValue(name, type=key.type) for name, key in self._keys.items()
        }
        for undefined in self._undefined_dependents():
            results[undefined] = ConfigValue(
                undefined,
                errors=[f"{undefined} is referred in the dependents, but not defined."],
                visible=False,
            )

        parsed: dict[str, Any] = {}
        for key in self._keys.values():
            result = results[key.name]
            value: Any = None
            if key.name in props:
                try:
                    value = _distinct(key, parse_type(key.name, props[key.name], key.type))
                except ConfigDefError as e:
                    result.add_error_message(e.message)
            elif key.required:
                result.add_error_message(_missing(key.name))
            else:
                value = key.default
            if key.validator is not None:
                try:
                    key.validator(key.name, value)
                except ConfigDefError as e:
                    result.add_error_message(e.message)
            result.value = value
            parsed[key.name] = value

        for key in self._keys.values():
            if key.recommender is None:
                continue
            result = results[key.name]
            try:
                recommended = _recommended_values(key.recommender, key.name, parsed)
                if result.recommended_values:
                    recommended = [v for v in recommended if v in result.recommended_values]
                result.recommended_values = recommended
                result.visible = _recommended_visible(key.recommender, key.name, parsed)
            except ConfigDefError as e:
                result.add_error_message(e.message)
        return results

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """``validate_all(props)`` as a list, in definition order."""
        return list(self.validate_all(props).values())

    # -- REST shapes -----------------------------------------------------------------------

    def key_info(self, key: ConfigKey | str, prefix: str = "") -> dict[str, Any]:
        """Connect's ConfigKeyInfo JSON object for one key."""
        return self._key(key).info(prefix)
