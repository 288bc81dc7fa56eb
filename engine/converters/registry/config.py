"""The registry keys every schema-registry converter shares (Confluent's ``AbstractKafkaSchemaSerDeConfig``),
the subject name strategies, the wire framing, and the client those keys describe.

Wire format (Confluent's): magic byte ``0``, the schema id as a 4-byte big-endian int, then the
payload. Subjects: ``TopicNameStrategy`` ``<topic>-key``/``<topic>-value`` (default),
``RecordNameStrategy`` the record's full name, ``TopicRecordNameStrategy`` ``<topic>-<full name>``;
named by Confluent's class names or their simple names.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine.api.config_def import ConfigDef, ConfigType, Importance, Password, Range, ValidString
from engine.api.errors import ConfigException, DataException
from engine.config.ssl_context import ssl_context
from engine.converters.base import converter_config_def
from engine.converters.registry.client import RetryPolicy, SchemaRegistryClient, redact_url

__all__ = [
    "MAGIC_BYTE",
    "RegistrySettings",
    "frame",
    "registry_config_def",
    "subject_name",
    "unframe",
]

MAGIC_BYTE: Final = 0
_HEADER: Final = struct.Struct(">bI")

SCHEMA_REGISTRY_URL: Final = "schema.registry.url"
AUTO_REGISTER: Final = "auto.register.schemas"
USE_LATEST: Final = "use.latest.version"
LATEST_STRICT: Final = "latest.compatibility.strict"
NORMALIZE: Final = "normalize.schemas"
MAX_SCHEMAS: Final = "max.schemas.per.subject"
BASIC_SOURCE: Final = "basic.auth.credentials.source"
BASIC_USER_INFO: Final = "basic.auth.user.info"
BEARER_SOURCE: Final = "bearer.auth.credentials.source"
BEARER_TOKEN: Final = "bearer.auth.token"
BEARER_CLUSTER: Final = "bearer.auth.logical.cluster"
BEARER_POOL: Final = "bearer.auth.identity.pool.id"
KEY_STRATEGY: Final = "key.subject.name.strategy"
VALUE_STRATEGY: Final = "value.subject.name.strategy"
SSL_PREFIX: Final = "schema.registry."
MAX_RETRIES: Final = "max.retries"
RETRIES_WAIT: Final = "retries.wait.ms"
RETRIES_MAX_WAIT: Final = "retries.max.wait.ms"
REQUEST_TIMEOUT: Final = "request.timeout.ms"

_STRATEGY_PACKAGE: Final = "io.confluent.kafka.serializers.subject."
STRATEGIES: Final = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
DEFAULT_STRATEGY: Final = _STRATEGY_PACKAGE + "TopicNameStrategy"


def registry_config_def() -> ConfigDef:
    """``converter.type`` plus the registry keys, with Confluent's defaults and documentation."""
    strategy = ValidString.in_(*STRATEGIES, *(_STRATEGY_PACKAGE + s for s in STRATEGIES))
    return (
        converter_config_def()
        .define(
            SCHEMA_REGISTRY_URL,
            ConfigType.LIST,
            None,
            None,
            Importance.HIGH,
            "Comma-separated list of URLs for Schema Registry instances that can be used to register "
            "or look up schemas.",
        )
        .define(
            MAX_RETRIES,
            ConfigType.INT,
            3,
            Range.at_least(0),
            Importance.LOW,
            "Maximum retries of a registry request that failed to connect or got a retriable status "
            "(408, 429, 500, 502, 503, 504), each round trying every URL.",
        )
        .define(
            RETRIES_WAIT,
            ConfigType.INT,
            1000,
            Range.at_least(0),
            Importance.LOW,
            "Initial wait before retrying a registry request, in milliseconds (doubled each retry, with jitter).",
        )
        .define(
            RETRIES_MAX_WAIT,
            ConfigType.INT,
            20000,
            Range.at_least(0),
            Importance.LOW,
            "Maximum wait before retrying a registry request, in milliseconds.",
        )
        .define(
            REQUEST_TIMEOUT,
            ConfigType.INT,
            30000,
            Range.at_least(1),
            Importance.LOW,
            "How long one registry request may take, in milliseconds.",
        )
        .define(
            MAX_SCHEMAS,
            ConfigType.INT,
            1000,
            None,
            Importance.LOW,
            "Maximum number of schemas to create or cache locally.",
        )
        .define(
            AUTO_REGISTER,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.MEDIUM,
            "Specify if the Serializer should attempt to register the Schema with Schema Registry",
        )
        .define(
            USE_LATEST,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Specify if the Serializer should use the latest subject version for serialization",
        )
        .define(
            LATEST_STRICT,
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Specify if the Serializer should check the backwards compatibility with the latest "
            "subject version when using use.latest.version",
        )
        .define(
            NORMALIZE,
            ConfigType.BOOLEAN,
            False,
            None,
            Importance.LOW,
            "Whether to normalize schemas, which generally ignores ordering when it is not significant",
        )
        .define(
            BASIC_SOURCE,
            ConfigType.STRING,
            "URL",
            ValidString.in_("URL", "USER_INFO", "SASL_INHERIT"),
            Importance.MEDIUM,
            "Specify how to pick the credentials for Basic Auth header. The supported "
            "values are URL, USER_INFO and SASL_INHERIT",
        )
        .define(
            BASIC_USER_INFO,
            ConfigType.PASSWORD,
            "",
            None,
            Importance.MEDIUM,
            "Specify the user info for Basic Auth in the form of {username}:{password}",
        )
        .define(
            BEARER_SOURCE,
            ConfigType.STRING,
            "STATIC_TOKEN",
            ValidString.in_("STATIC_TOKEN"),
            Importance.MEDIUM,
            "Specify how to pick the credentials for Bearer Auth header.",
        )
        .define(
            BEARER_TOKEN,
            ConfigType.PASSWORD,
            "",
            None,
            Importance.MEDIUM,
            "Specify the Bearer token to be used for authentication",
        )
        .define(
            BEARER_CLUSTER,
            ConfigType.STRING,
            "",
            None,
            Importance.LOW,
            "Specify the logical cluster to send with the Bearer token (target-sr-cluster).",
        )
        .define(
            BEARER_POOL,
            ConfigType.STRING,
            "",
            None,
            Importance.LOW,
            "Specify the identity pool to send with the Bearer token (Confluent-Identity-Pool-Id).",
        )
        .define(
            KEY_STRATEGY,
            ConfigType.STRING,
            DEFAULT_STRATEGY,
            strategy,
            Importance.MEDIUM,
            "Determines how to construct the subject name under which the key schema is registered "
            "with the schema registry.",
        )
        .define(
            VALUE_STRATEGY,
            ConfigType.STRING,
            DEFAULT_STRATEGY,
            strategy,
            Importance.MEDIUM,
            "Determines how to construct the subject name under which the value schema is registered "
            "with the schema registry.",
        )
    )


def subject_name(strategy: str, topic: str, is_key: bool, record_name: str | None) -> str:
    """The subject ``strategy`` gives a schema written to ``topic`` (``record_name``: its full name)."""
    simple = strategy.removeprefix(_STRATEGY_PACKAGE)
    if simple == "TopicNameStrategy":
        return f"{topic}-{'key' if is_key else 'value'}"
    if record_name is None:
        raise DataException(f"{simple} needs a named record schema; topic {topic} got an unnamed one")
    if simple == "RecordNameStrategy":
        return record_name
    return f"{topic}-{record_name}"


def frame(schema_id: int, payload: bytes) -> bytes:
    """Magic byte, big-endian schema id, payload."""
    return _HEADER.pack(MAGIC_BYTE, schema_id) + payload


def unframe(topic: str, data: bytes, what: str) -> tuple[int, bytes]:
    """(schema id, payload) of a framed record; a short record or a wrong magic byte raises ``DataException``.

    The payload is sliced out as bytes: one copy, which a BytesIO then shares, where a memoryview
    slice costs two objects and BytesIO copies it anyway."""
    if len(data) < _HEADER.size:
        raise DataException(
            f"Failed to deserialize data for topic {topic} to {what}: Unknown magic byte! "
            f"(record of {len(data)} bytes is shorter than the 5-byte header)"
        )
    magic, schema_id = _HEADER.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise DataException(
            f"Failed to deserialize data for topic {topic} to {what}: Unknown magic byte! "
            f"(got {magic & 0xFF:#04x}, expected 0x00)"
        )
    return schema_id, data[_HEADER.size :]


class RegistrySettings:
    """The parsed registry keys and the client they describe."""

    def __init__(
        self,
        parsed: Mapping[str, Any],
        raw: Mapping[str, Any],
        is_key: bool,
        make_client: Callable[..., SchemaRegistryClient] = SchemaRegistryClient,
    ) -> None:
        urls = [u.strip() for u in (parsed.get(SCHEMA_REGISTRY_URL) or []) if u.strip()]
        if not urls:
            raise ConfigException(
                f'Missing required configuration "{SCHEMA_REGISTRY_URL}" which has no default value.'
            )
        self.is_key = is_key
        self.auto_register: bool = parsed[AUTO_REGISTER]
        self.use_latest: bool = parsed[USE_LATEST]
        self.latest_strict: bool = parsed[LATEST_STRICT]
        self.normalize: bool = parsed[NORMALIZE]
        self.strategy: str = parsed[KEY_STRATEGY if is_key else VALUE_STRATEGY]
        headers = _auth_headers(parsed, raw, urls)
        context = None
        if any(u.lower().startswith("https:") for u in urls):
            ssl_props = {
                k.removeprefix(SSL_PREFIX): str(v)
                for k, v in raw.items()
                if k.startswith(SSL_PREFIX + "ssl.")
            }
            context = ssl_context(ssl_props, "client", prefix=SSL_PREFIX)
        retry = RetryPolicy(parsed[MAX_RETRIES], parsed[RETRIES_WAIT], parsed[RETRIES_MAX_WAIT])
        self.client = make_client(
            urls, headers=headers, ssl_context=context, timeout_s=parsed[REQUEST_TIMEOUT] / 1000, retry=retry
        )
        self.urls_for_messages = ", ".join(redact_url(u) for u in urls)

    def subject(self, topic: str, record_name: str | None) -> str:
        return subject_name(self.strategy, topic, self.is_key, record_name)


def _secret(value: Any) -> str:
    return value.value if isinstance(value, Password) else str(value or "")


def _auth_headers(parsed: Mapping[str, Any], raw: Mapping[str, Any], urls: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    source = parsed[BASIC_SOURCE]
    user_info = ""
    if source == "USER_INFO":
        user_info = _secret(parsed[BASIC_USER_INFO])
        if not user_info:
            raise ConfigException(f"{BASIC_SOURCE}=USER_INFO needs {BASIC_USER_INFO}")
    elif source == "SASL_INHERIT":
        user_info = _sasl_user_info(raw)
    if user_info:
        headers["Authorization"] = "Basic " + base64.b64encode(user_info.encode()).decode()
    token = _secret(parsed[BEARER_TOKEN])
    if token:
        if "Authorization" in headers:
            raise ConfigException("Only one of basic.auth.* and bearer.auth.* credentials can be set")
        if any(urlinfo for urlinfo in urls if "@" in urlinfo.split("//", 1)[-1].split("/", 1)[0]):
            raise ConfigException("Only one of URL user-info and bearer.auth.* credentials can be set")
        headers["Authorization"] = f"Bearer {token}"
        if parsed[BEARER_CLUSTER]:
            headers["target-sr-cluster"] = parsed[BEARER_CLUSTER]
        if parsed[BEARER_POOL]:
            headers["Confluent-Identity-Pool-Id"] = parsed[BEARER_POOL]
    return headers


def _sasl_user_info(converter_configs: Mapping[str, Any]) -> str:
    """``SASL_INHERIT``: username and password of a PLAIN or SCRAM ``sasl.jaas.config``."""
    from engine.config.kafka_clients.jaas import client_login_module

    text = _secret(converter_configs.get("sasl.jaas.config"))  # the converter's own (value.converter.sasl...)
    if not text:
        raise ConfigException(f"{BASIC_SOURCE}=SASL_INHERIT needs sasl.jaas.config")
    module = client_login_module(text)
    options = module.options
    if "username" not in options or "password" not in options:
        raise ConfigException(
            f"{BASIC_SOURCE}=SASL_INHERIT needs a sasl.jaas.config with username and password"
        )
    return f"{options['username']}:{options['password']}"
