"""What the three schema-registry converters share: framing, subjects, registration and both caches.

A format (Avro, Protobuf, JSON Schema) supplies how a Connect schema becomes a registry schema and
a payload writer (:meth:`RegistryConverter._prepare_write`), and how a registry schema becomes a
Connect schema and a payload reader (:meth:`RegistryConverter._prepare_read`). This class does the
rest, once per new schema: the subject (``*.subject.name.strategy``), the id (``auto.register.schemas``
registers, else looks it up; ``use.latest.version`` takes the subject's latest, checked for
compatibility first with ``latest.compatibility.strict``), cached by (topic, Connect schema) one way
and by schema id the other, so a record costs no registry round trip once its schema is known. The
entry used last is kept each way (reading, under the record's 5-byte header, so a record framed as
the one before it is not unframed first): a stream of one schema skips the cache's bookkeeping.

Registry round trips never run on a task loop's event loop: in a task loop (``AWAITING_CALLER``),
a conversion that misses its cache starts the fetch as a task of the loop and raises
``ConversionPending``; the loop awaits it (``RetryWithToleranceOperator.recover``) and converts
again, so a slow or failing registry holds up only the records waiting for that schema. Any other
caller (a script, a test, the DLQ's rendering) blocks until the schema is there, as before. One
fetch per schema is in flight at a time, whoever waits for it; its failure is raised by the next
conversion that needs it, and the one after that fetches again.

Every failure is a ``DataException`` naming the topic and, where there is one, the subject and the
schema id, with the registry's answer; the worker adds partition and offset when it reports it
(``errors.log.enable``, the DLQ headers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Hashable, Mapping
from typing import Any, ClassVar, TypeVar

from engine.api.config_def import ConfigDef
from engine.api.errors import ConfigException, DataException
from engine.converters.base import (
    AWAITING_CALLER,
    BuiltinConverter,
    ConversionPending,
    RawHeaders,
    parse_converter_config,
)
from engine.converters.registry.client import RegistryError, run_blocking
from engine.converters.registry.config import RegistrySettings, frame, registry_config_def, unframe
from engine.data.cache import LRUCache
from engine.data.schema import Schema, SchemaAndValue

__all__ = ["HEADER_SIZE", "Reader", "RegistryConverter", "Writer", "require"]

Writer = Callable[[Any], bytes]
Reader = Callable[[bytes], Any]
"""Reads a whole framed record (magic byte and schema id included: each format slices its payload
from its own offset, Protobuf's after the message indexes, so the record is copied once) into the
Connect value; or into a ``SchemaAndValue`` when the record names a schema other than its id's
(Protobuf's message indexes other than ``[0]``)."""
HEADER_SIZE = 5  # Confluent's framing: the magic byte, then the schema id (4 bytes, big-endian)
_NOT_FOUND_CODES = (40401, 40402, 40403, 404)
# SchemaAndValue is a frozen dataclass: its __init__ sets each slot through object.__setattr__, a
# third of a microsecond per record; the slots' own setters do the same in half the time
_new = object.__new__
_set_schema = vars(SchemaAndValue)["schema"].__set__
_set_value = vars(SchemaAndValue)["value"].__set__
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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
        self._pending: dict[Hashable, asyncio.Task[None]] = {}  # fetches in flight, by what they fetch
        self._failures: dict[Hashable, DataException] = {}  # fetches that failed, raised once each
        # the entry used last, each way (see the module's docstring)
        self._last_write: tuple[str, Schema, int, bytes, Writer] | None = None
        self._last_read: tuple[bytes, int, Schema, Reader] | None = None

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
        self._last_write = None
        self._last_read = None

    def _load_libraries(self) -> None:
        """Import the format's optional libraries (``require``), raising ``ConfigException`` if missing."""

    # -- format hooks ----------------------------------------------------------------------------

    def _prepare_write(self, schema: Schema) -> tuple[str, str | None, Callable[[Any], Writer]]:
        """(registry schema text, record full name for the subject, writer factory).

        The factory takes the schema actually written under (``None``: ours; else what
        :meth:`_written_under` made of the subject's latest, with ``use.latest.version``) and
        returns the payload writer.
        """
        raise NotImplementedError

    async def _written_under(self, schema_text: str, references: Mapping[str, str]) -> Any:
        """What the writer factory takes for a registry schema (its text, unless a format compiles it)."""
        return schema_text

    def _prepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        """(Connect schema, payload reader) for a registry schema; ``references``: every schema it
        references, directly or not, by reference name, each after those it references."""
        raise NotImplementedError

    async def _aprepare_read(self, schema_text: str, references: Mapping[str, str]) -> tuple[Schema, Reader]:
        """:meth:`_prepare_read`, for formats whose schemas need awaiting (a compiler) first."""
        return self._prepare_read(schema_text, references)

    async def _references(
        self, references: tuple[Mapping[str, Any], ...], resolved: dict[str, str] | None = None
    ) -> dict[str, str]:
        """Every schema ``references`` name, fetched by subject and version (``GET /subjects/{s}/
        versions/{v}``, cached), theirs first: reference name -> schema text."""
        resolved = {} if resolved is None else resolved
        client = self._settings().client
        for reference in references:
            name = str(reference.get("name") or "")
            if not name or name in resolved:
                continue
            subject, version = reference.get("subject"), reference.get("version")
            if subject is None or version is None:
                raise DataException(
                    f"the schema reference {name!r} has no subject or version: {dict(reference)}"
                )
            try:
                registered = await client.aversion(str(subject), int(version), fmt=self.SCHEMA_FORMAT)
            except RegistryError as exc:
                raise DataException(
                    f"Error retrieving the schema {name!r} it references (subject {subject}, version "
                    f"{version}): {exc}"
                ) from exc
            resolved[name] = ""  # a cycle stops here
            await self._references(registered.references, resolved)
            del resolved[name]
            resolved[name] = registered.schema
        return resolved

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
        last = self._last_write
        if last is not None and last[1] is schema and last[0] == topic:
            schema_id, header, writer = last[2], last[3], last[4]
        else:
            key = (topic, schema)
            entry = self._writes.get(key)
            if entry is None:
                entry = self._awaiting(
                    ("write", key),
                    self._writes,
                    key,
                    lambda: self._prepare_schema(topic, schema),
                    f"the {self.FORMAT} schema of a record for topic {topic}",
                )
            schema_id, writer = entry
            header = frame(schema_id, b"")
            self._last_write = (topic, schema, schema_id, header, writer)
        try:
            return header + writer(value)
        except DataException as exc:
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic} with schema id {schema_id}: {exc}"
            ) from exc
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            raise DataException(
                f"Failed to serialize {self.FORMAT} data from topic {topic} with schema id "
                f"{schema_id}: {type(exc).__name__}: {exc}"
            ) from exc

    def _awaiting(
        self,
        slot: Hashable,
        cache: LRUCache[K, V],
        key: K,
        fetch: Callable[[], Coroutine[Any, Any, V]],
        what: str,
    ) -> V:
        """``fetch()``'s result for a cache miss: blocking without a loop, else ``ConversionPending``."""
        failure = self._failures.pop(slot, None)
        if failure is not None:
            raise failure
        if not AWAITING_CALLER.get():
            value = run_blocking(fetch())
            cache.put(key, value)
            return value
        loop = asyncio.get_running_loop()
        task = self._pending.get(slot)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(self._settle(slot, cache, key, fetch()), name=f"schema-fetch {slot!r}")
            self._pending[slot] = task
        raise ConversionPending(what, task)

    async def _settle(
        self, slot: Hashable, cache: LRUCache[K, V], key: K, fetch: Coroutine[Any, Any, V]
    ) -> None:
        """Run one fetch: its result into ``cache``, or its failure kept for the next conversion."""
        try:
            cache.put(key, await fetch)
        except DataException as exc:
            self._failures[slot] = exc
        except Exception as exc:  # a bug in a mapping: still the record's failure, never a lost task
            failure = DataException(f"Failed to get the {self.FORMAT} schema: {type(exc).__name__}: {exc}")
            failure.__cause__ = exc
            self._failures[slot] = failure
        finally:
            if self._pending.get(slot) is asyncio.current_task():
                del self._pending[slot]

    def close(self) -> None:
        """Cancel the fetches still in flight (their waiters are stopping too)."""
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()

    async def _prepare_schema(self, topic: str, schema: Schema) -> tuple[int, Writer]:
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
                latest = await client.alatest(subject)
                if settings.latest_strict and not await client.acompatible(
                    subject, text, self.SCHEMA_TYPE, str(latest.version or "latest")
                ):
                    raise DataException(
                        f"Failed to serialize {self.FORMAT} data from topic {topic}: the "
                        f"record's schema is not compatible with the latest schema of subject "
                        f"{subject} (schema id {latest.schema_id}), and latest.compatibility."
                        "strict is true"
                    )
                references = await self._references(latest.references)
                return latest.schema_id, make_writer(await self._written_under(latest.schema, references))
            if settings.auto_register:
                schema_id = await client.aregister(
                    subject, text, self.SCHEMA_TYPE, normalize=settings.normalize
                )
            else:
                schema_id = await client.alookup(
                    subject, text, self.SCHEMA_TYPE, normalize=settings.normalize
                )
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
        last = self._last_read
        if last is not None and value[:HEADER_SIZE] == last[0]:
            schema_id, schema, reader = last[1], last[2], last[3]
        else:
            schema_id, _ = unframe(topic, value, self.FORMAT)
            entry = self._reads.get(schema_id)
            if entry is None:
                entry = self._awaiting(
                    ("read", schema_id),
                    self._reads,
                    schema_id,
                    lambda: self._fetch(topic, schema_id),
                    f"{self.FORMAT} schema id {schema_id} (topic {topic})",
                )
            schema, reader = entry
            self._last_read = (bytes(value[:HEADER_SIZE]), schema_id, schema, reader)
        try:
            converted = reader(value)
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
        if type(converted) is SchemaAndValue:  # the record's own framing named its schema
            return converted
        result: SchemaAndValue = _new(SchemaAndValue)
        _set_schema(result, schema)
        _set_value(result, converted)
        return result

    async def _fetch(self, topic: str, schema_id: int) -> tuple[Schema, Reader]:
        settings = self._settings()
        side = "key" if self.is_key else "value"
        try:
            registered = await settings.client.aby_id(schema_id, fmt=self.SCHEMA_FORMAT)
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
            references = await self._references(registered.references)
            return await self._aprepare_read(registered.schema, references)
        except (DataException, ValueError, TypeError, KeyError) as exc:
            raise DataException(
                f"Failed to deserialize data for topic {topic} to {self.FORMAT}: schema id "
                f"{schema_id} cannot be converted to a Connect schema: {exc}"
            ) from exc
