"""What the three schema-registry converters share: framing, subjects, registration and both caches.

A format (Avro, Protobuf, JSON Schema) supplies how a Connect schema becomes a registry schema and
a payload writer (:meth:`RegistryConverter._prepare_write`), and how a registry schema becomes a
Connect schema and a payload reader (:meth:`RegistryConverter._prepare_read`). This class does the
rest, once per new schema: the subject (``*.subject.name.strategy``), the id (``auto.register.schemas``
registers, else looks it up; ``use.latest.version`` takes the subject's latest, checked for
compatibility first with ``latest.compatibility.strict``), cached by (topic, Connect schema) one way
and by schema id the other, so a record costs no registry round trip once its schema is known.

Every failure is a ``DataException`` naming the topic and, where there is one, the schema id; the
worker adds partition and offset when it reports it (``errors.log.enable``, the DLQ headers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from engine.api.config_def import ConfigDef
from engine.api.errors import ConfigException, DataException
from engine.converters.base import BuiltinConverter, RawHeaders, parse_converter_config
from engine.converters.registry.client import RegistryError
from engine.converters.registry.config import RegistrySettings, frame, registry_config_def, unframe
from engine.data.cache import LRUCache
from engine.data.schema import Schema, SchemaAndValue

__all__ = ["RegistryConverter", "Writer", "require"]

Writer = Callable[[Any], bytes]
Reader = Callable[[memoryview], Any]
_NOT_FOUND_CODES = (40401, 40402, 40403, 404)


def require(module: str, converter: str) -> Any:
    """Import ``module`` or say which extra to install (the engine runs without them)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigException(
            f"{converter} needs the Python package {module.split('.')[0]}: "
            "pip install 'connect-engine[registry]'"
        ) from None


class RegistryConverter(BuiltinConverter):
    """A converter in Confluent's wire format; subclasses name the format and map schemas."""

    SCHEMA_TYPE: ClassVar[str] = "AVRO"
    FORMAT: ClassVar[str] = "Avro"
    JAVA_NAME: ClassVar[str] = ""
    SCHEMA_FORMAT: ClassVar[str | None] = None  # the registry's ``format`` to fetch schemas in

    def __init__(self) -> None:
        self.is_key = False
        self.settings: RegistrySettings | None = None
        self._writes: LRUCache[tuple[str, Schema], tuple[int, Writer]] = LRUCache(1000)
        self._reads: LRUCache[int, tuple[Schema, Reader]] = LRUCache(1000)

    def config(self) -> ConfigDef:
        return registry_config_def()

    def _configure_format(self, parsed: Mapping[str, Any]) -> int:
        """Read the format's own keys; return the schema cache size."""
        return int(parsed.get("max.schemas.per.subject", 1000))

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        self._load_libraries()
        parsed = parse_converter_config(self.config(), configs, is_key)
        self.is_key = bool(is_key)
        self.settings = RegistrySettings(parsed, configs, self.is_key)
        size = self._configure_format(parsed)
        self._writes = LRUCache(size)
        self._reads = LRUCache(size)

    def _load_libraries(self) -> None:
        """Import the format's optional libraries (``require``), raising ``ConfigException`` if missing."""

    # -- format hooks ----------------------------------------------------------------------------

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[str | None], Writer]]:
        """(registry schema text, record full name for the subject, writer factory).

        The factory takes the schema text actually written under (``None``: ours; else the subject's
        latest with ``use.latest.version``) and returns the payload writer.
        """
        raise NotImplementedError

    def _prepare_read(
        self, schema_text: str, references: tuple[Mapping[str, Any], ...]
    ) -> tuple[Schema, Reader]:
        raise NotImplementedError

    # -- Converter -------------------------------------------------------------------------------

    def _settings(self) -> RegistrySettings:
        if self.settings is None:
            raise DataException(f"{self.JAVA_NAME} used before configure()")
        return self.settings

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: RawHeaders | None = None
    ) -> bytes | None:
        if value is None:
            return None  # a tombstone, as Confluent's serializers write a null
        if schema is None:
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic}: {self.JAVA_NAME} "
                "needs a schema (schemaless values are not supported)"
            )
        key = (topic, schema)
        entry = self._writes.get(key)
        if entry is None:
            entry = self._prepare_schema(topic, schema)
            self._writes.put(key, entry)
        schema_id, writer = entry
        try:
            return frame(schema_id, writer(value))
        except DataException as exc:
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic} with schema id {schema_id}: {exc}"
            ) from exc
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic} with schema id "
                f"{schema_id}: {type(exc).__name__}: {exc}"
            ) from exc

    def _prepare_schema(self, topic: str, schema: Schema) -> tuple[int, Writer]:
        settings = self._settings()
        try:
            text, record_name, make_writer = self._prepare_write(schema)
        except (DataException, ValueError, TypeError, KeyError) as exc:
            raise DataException(
                f"Failed to convert the Connect schema of topic {topic} to {self.FORMAT}: {exc}"
            ) from exc
        subject = settings.subject(topic, record_name)
        client = settings.client
        what = f"{self.FORMAT} schema for subject {subject} (topic {topic})"
        try:
            if settings.use_latest:
                latest = client.latest(subject)
                if settings.latest_strict and not client.compatible(
                    subject, text, self.SCHEMA_TYPE, str(latest.version or "latest")
                ):
                    raise DataException(
                        f"Failed to serialize {self.FORMAT} data from topic {topic}: the "
                        f"record's schema is not compatible with the latest schema of subject "
                        f"{subject} (schema id {latest.schema_id}), and latest.compatibility."
                        "strict is true"
                    )
                return latest.schema_id, make_writer(latest.schema)
            if settings.auto_register:
                schema_id = client.register(subject, text, self.SCHEMA_TYPE, normalize=settings.normalize)
            else:
                schema_id = client.lookup(subject, text, self.SCHEMA_TYPE, normalize=settings.normalize)
        except RegistryError as exc:
            verb = (
                "fetching the latest version of"
                if settings.use_latest
                else "registering"
                if settings.auto_register
                else "looking up"
            )
            if exc.status == 409:
                raise DataException(
                    f"Failed to serialize {self.FORMAT} data from topic {topic}: the registry "
                    f"refused the {what} as incompatible: {exc}"
                ) from exc
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic}: error {verb} the {what}: {exc}"
            ) from exc
        return schema_id, make_writer(None)

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: RawHeaders | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue.NULL
        schema_id, payload = unframe(topic, value, self.FORMAT)
        entry = self._reads.get(schema_id)
        if entry is None:
            entry = self._fetch(topic, schema_id)
            self._reads.put(schema_id, entry)
        schema, reader = entry
        try:
            return SchemaAndValue(schema, reader(payload))
        except DataException as exc:
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT} with schema id "
                f"{schema_id}: {exc}"
            ) from exc
        except (ValueError, TypeError, KeyError, EOFError, IndexError, AttributeError, OverflowError) as exc:
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT} with schema id "
                f"{schema_id}: {type(exc).__name__}: {exc}"
            ) from exc

    def _fetch(self, topic: str, schema_id: int) -> tuple[Schema, Reader]:
        settings = self._settings()
        side = "key" if self.is_key else "value"
        try:
            registered = settings.client.by_id(schema_id, fmt=self.SCHEMA_FORMAT)
        except RegistryError as exc:
            reason = "schema not found" if exc.error_code in _NOT_FOUND_CODES else "registry error"
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT}: Error "
                f"retrieving {self.FORMAT} {side} schema for id {schema_id} ({reason}): "
                f"{exc}"
            ) from exc
        if registered.schema_type != self.SCHEMA_TYPE:
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT}: schema id "
                f"{schema_id} is a {registered.schema_type} schema, not {self.SCHEMA_TYPE}"
            )
        try:
            return self._prepare_read(registered.schema, registered.references)
        except (DataException, ValueError, TypeError, KeyError) as exc:
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT}: schema id "
                f"{schema_id} cannot be converted to a Connect schema: {exc}"
            ) from exc
