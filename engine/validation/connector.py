"""Connector config validation before anything is written, with Connect's messages (Kafka's
``AbstractHerder.validateConnectorConfig``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import cache, partial

import structlog

from engine.api._inline import INLINE_ATTRIBUTE
from engine.api._invoke import invoke
from engine.api.config_def import ConfigDef
from engine.api.connector import Config, Connector
from engine.config.kafka_clients import NO_SETTINGS, ROLES, KafkaClients
from engine.config.worker import WorkerConfig
from engine.converters.factory import converter_class
from engine.errors import ConfigError, ConnectorInstantiationError, OperationTimeout
from engine.herder.restart_policy import restart_key_errors
from engine.observability.request_stage import enter_stage
from engine.plugins.classes import qualified_name
from engine.plugins.discovery import plugin_version
from engine.plugins.loading import load_connector_class
from engine.plugins.versions import PLUGIN_VERSION, InvalidVersionSpecification, VersionMismatch, require
from engine.transforms.resolve import Kind, find_class
from engine.validation.source_config import source_key_errors
from engine.validation.unknown_keys import unknown_connector_keys, unknown_key_message

log = structlog.get_logger(component="validation")

VALIDATING = "performing multi-property validation for the connector"

_BOOLEAN_KEYS = ("tasks.max.enforce", "offsets.reset.on.delete")


@cache
def validator_instance(cls: type[Connector]) -> Connector:
    """The never-started instance whose ``config()``/``validate()`` validation asks (Connect caches one per
    class)."""
    return instantiate(cls)


def instantiate(cls: type[Connector]) -> Connector:
    """A fresh instance, or ``ConnectorInstantiationError`` (Connect's "Instantiation error", 500) when the
    class cannot be instantiated: abstract (a method the connector must write is missing) or its
    constructor raises."""
    try:
        return cls()
    except Exception as exc:
        raise ConnectorInstantiationError(qualified_name(cls), exc) from exc


@cache
def _framework_validation(cls: type[Connector]) -> bool:
    """Whether ``validate`` and ``config`` are both the framework's own (an empty ConfigDef).

    Then validation is a few dictionary look-ups: run it on the loop instead of a worker thread.
    Any user override of either still runs in a thread, as blocking code must.
    """
    return cls.validate is Connector.validate and bool(getattr(cls.config, INLINE_ATTRIBUTE, False))


def check_name(name: object) -> None:
    """Only a string can name a connector; what a string may hold is ``name``'s validation (below)."""
    if not isinstance(name, str):
        message = f"Connector name must be a string, not {type(name).__name__}"
        raise ConfigError(message, errors={"name": [message]})


def name_errors(name: str | None) -> list[str]:
    """``ConnectorConfig``'s ``name`` validator (``NonEmptyStringWithoutControlChars``), in its words."""
    if name is None:
        return []
    if name == "":
        return [f"Invalid value {name} for configuration name: String may not be empty"]
    controls = [str(ord(ch)) for ch in name if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F]
    if controls:
        return [
            f"Invalid value {name} for configuration name: String may not contain control sequences but had "
            f"the following ASCII chars: {', '.join(controls)}"
        ]
    return []


def java_map(config: Mapping[str, str | None]) -> str:
    """A ``Map<String, String>`` as Java prints it (``{a=1, b=null}``), for Connect's messages."""
    return "{" + ", ".join(f"{k}={'null' if v is None else v}" for k, v in config.items()) + "}"


def _framework_errors(config: Mapping[str, str | None]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if name_errors(config.get("name")):
        errors["name"] = name_errors(config.get("name"))
    for key, value in config.items():
        if value is None:
            errors.setdefault(key, []).append("Null value can not be supplied as the configuration value.")
    raw = config.get("tasks.max") or "1"
    try:
        if int(raw.strip()) < 1:
            errors.setdefault("tasks.max", []).append(
                f"Invalid value {raw} for configuration tasks.max: Value must be at least 1"
            )
    except ValueError:
        errors.setdefault("tasks.max", []).append(
            f"Invalid value {raw} for configuration tasks.max: Not a number of type INT"
        )
    for key in _BOOLEAN_KEYS:
        value = config.get(key)
        if value is not None and value.strip().lower() not in ("true", "false"):
            errors.setdefault(key, []).append(
                f"Invalid value {value} for configuration {key}: Expected value to be either true or false"
            )
    return errors


def client_override_errors(config: Mapping[str, str | None], clients: KafkaClients) -> dict[str, list[str]]:
    """``producer.override.*``, ``consumer.override.*``, ``admin.override.*``: refused by
    ``connector.client.config.override.policy`` (Connect's message), unknown, unsupported or malformed
    (``AbstractHerder.validateClientOverrides``). Every prefix is checked, whichever clients the
    connector uses: a key that would do nothing is refused rather than dropped."""
    errors: dict[str, list[str]] = {}
    for role in ROLES:
        for key, messages in clients.override_errors(config, role).items():
            errors.setdefault(key, []).extend(messages)
    return errors


def _key_of(message: str, default: str) -> str:
    """The config key a ConfigException message names (``... for configuration <key>: ...``)."""
    marker = "for configuration "
    if marker in message:
        return message.split(marker, 1)[1].split(":", 1)[0].strip()
    return default


def _data_plane_errors(cls: type[Connector], props: Mapping[str, str]) -> dict[str, list[str]]:
    """What the task loops would refuse at start: error policy, converters, rate limits, transforms, sink
    topics, and the source keys (``exactly.once.support``, ``transaction.boundary`` ...).

    Cheap when a connector sets none of them, so every create can afford it.
    """
    from engine.api.connector import SinkConnector, SourceConnector
    from engine.api.errors import ConfigException
    from engine.tolerance import ErrorPolicy
    from engine.transforms.chain import TransformationChain
    from engine.worker.rate_limit import RECORD_RATE_LIMIT, RateLimits
    from engine.worker.task_converters import TaskConverters

    def transforms() -> None:
        TransformationChain.from_config(props).close()

    errors: dict[str, list[str]] = {}
    checks: list[tuple[Callable[[], object], str]] = [
        (partial(ErrorPolicy.from_config, props), "errors.tolerance"),
        (partial(TaskConverters.check, props, {}), "value.converter"),
        (partial(RateLimits.from_config, props), RECORD_RATE_LIMIT),
    ]
    if props.get("transforms", "").strip() or props.get("predicates", "").strip():
        checks.append((transforms, "transforms"))
    for check, default_key in checks:
        try:
            check()
        except ConfigException as exc:
            errors.setdefault(_key_of(str(exc), default_key), []).append(str(exc))
    for key, messages in restart_key_errors(props).items():
        errors.setdefault(key, []).extend(messages)
    if issubclass(cls, SourceConnector):
        for key, messages in source_key_errors(props).items():
            errors.setdefault(key, []).extend(messages)
    if issubclass(cls, SinkConnector):
        topics, regex = props.get("topics", "").strip(), props.get("topics.regex", "").strip()
        if topics and regex:
            both = "topics and topics.regex are mutually exclusive options, but both are set."
            errors.setdefault("topics", []).append(both)
        elif not topics and not regex:
            errors.setdefault("topics", []).append("Must configure one of topics or topics.regex")
    return errors


def plugin_version_errors(cls: type, props: Mapping[str, str]) -> dict[str, list[str]]:
    """KIP-891: each ``*.plugin.version`` the config sets, against the installed version of the plugin
    it names (Connect's message); a malformed range is left to the key's validator, a converter left to
    the worker's setting is checked when the task starts."""
    plugins: dict[str, type | None] = {"connector.plugin.version": cls}
    for role in ("key", "value", "header"):
        name = props.get(f"{role}.converter")
        try:
            plugins[f"{role}.converter.plugin.version"] = converter_class(name) if name else None
        except Exception:  # an unknown class is the converter key's own error
            plugins[f"{role}.converter.plugin.version"] = None
    kinds: tuple[tuple[Kind, str], ...] = (("transformation", "transforms"), ("predicate", "predicates"))
    for kind, list_key in kinds:
        for alias in (a.strip() for a in props.get(list_key, "").split(",") if a.strip()):
            type_name = props.get(f"{list_key}.{alias}.type")
            plugins[f"{list_key}.{alias}.{PLUGIN_VERSION}"] = (
                find_class(type_name, kind) if type_name else None
            )
    errors: dict[str, list[str]] = {}
    for key, plugin in plugins.items():
        if plugin is None or props.get(key) is None:
            continue
        try:
            require(qualified_name(plugin), plugin_version(plugin), props.get(key))
        except InvalidVersionSpecification:
            continue
        except VersionMismatch as exc:
            errors[key] = [str(exc)]
    return errors


async def validate_connector_config(
    config: Mapping[str, str | None], *, timeout: float, clients: KafkaClients = NO_SETTINGS
) -> type[Connector]:
    """Raise ConfigError with every problem found; return the connector class when valid.

    ``clients``: the worker's Kafka client settings, whose override policy the overrides must pass.
    """
    class_name = config.get("connector.class")
    if not class_name:
        raise ConfigError("Connector config contains no connector type")  # Kafka 4.4 no longer prints the map
    cls = load_connector_class(class_name)
    errors = _framework_errors(config)
    props = {k: v for k, v in config.items() if v is not None}
    for key, messages in _data_plane_errors(cls, props).items():
        errors.setdefault(key, []).extend(messages)
    for key, messages in client_override_errors(config, clients).items():
        errors.setdefault(key, []).extend(messages)
    for key, messages in plugin_version_errors(cls, props).items():
        errors.setdefault(key, []).extend(messages)
    enter_stage(VALIDATING)
    try:
        if _framework_validation(cls):
            result = validator_instance(cls).validate(props)
        else:
            async with asyncio.timeout(timeout):
                result = await invoke(validator_instance(cls).validate, props)
    except TimeoutError:
        raise OperationTimeout(VALIDATING) from None
    if not isinstance(result, Config):
        raise ConfigError(f"{class_name}.validate() must return a Config, got {type(result).__name__}")
    for value in result.config_values:
        if value.errors:
            errors.setdefault(value.name, []).extend(value.errors)
    count = sum(len(v) for v in errors.values())
    if count:
        lines = "\n".join(msg for msgs in errors.values() for msg in msgs)
        raise ConfigError(
            f"Connector configuration is invalid and contains the following {count} error(s):\n{lines}\n"
            "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
            errors=errors,
        )
    return cls


def redacted(exc: ConfigError, written: Mapping[str, str], resolved: Mapping[str, str]) -> ConfigError:
    """``exc`` without the values config providers resolved: each shows as the reference written
    (``${provider:path:key}``), as Connect 4.4 stopped echoing them; a 400 is no way to read a secret."""
    secrets = sorted(
        ((value, written[key]) for key, value in resolved.items() if value and value != written.get(key)),
        key=lambda pair: -len(pair[0]),  # a secret that contains another is replaced first
    )
    if not secrets:
        return exc

    def hide(text: str) -> str:
        for value, reference in secrets:
            text = text.replace(value, reference)
        return text

    errors = {key: [hide(message) for message in messages] for key, messages in exc.errors.items()}
    return type(exc)(hide(str(exc)), errors=errors) if type(exc) is ConfigError else exc


async def _warn_unknown_keys(
    name: str, cls: type[Connector], config: Mapping[str, str], *, timeout: float
) -> None:
    """Log each key nothing reads (a typo otherwise leaves a default in force silently)."""
    own: object
    try:
        if _framework_validation(cls):
            own = validator_instance(cls).config()
        else:
            async with asyncio.timeout(timeout):
                own = await invoke(validator_instance(cls).config)
    except Exception:  # validation asked it already; a config() that fails now costs only the hints
        own = None
    for key, near in unknown_connector_keys(cls, config, own if isinstance(own, ConfigDef) else None):
        log.warning(
            "connector.unknown_key",
            connector=name,
            key=key,
            did_you_mean=near,
            message=unknown_key_message(key, near),
        )


async def checked_config(
    name: str,
    config: Mapping[str, str],
    worker: WorkerConfig,
    *,
    exactly_once: bool,
    mode_check: Callable[[str, Mapping[str, str]], None],
) -> dict[str, str]:
    """The config a create or update writes for connector ``name``: its name checked and filled in,
    validated as it will be started, then checked by ``mode_check`` (a cluster's sink group) and, with
    ``exactly_once`` on, for exactly-once support."""
    check_name(name)
    full = {str(k): v for k, v in config.items()}
    given = full.setdefault("name", name)
    if given != name:
        raise ConfigError(
            f"Connector name configuration ({given}) doesn't match connector name in the URL ({name})"
        )
    # as Connect's validateConnectorConfig: the connector validates what it will be started with, its
    # ${provider:path:key} references resolved (the log keeps the references); one that does not resolve
    # is left as written here, and fails the connector when it starts, naming the key
    try:
        resolved = worker.transformer.resolve(full)
    except ConfigError:
        resolved = full
    try:
        cls = await validate_connector_config(resolved, timeout=worker.callback_timeout, clients=worker.kafka)
    except ConfigError as exc:
        raise redacted(exc, full, resolved) from None
    mode_check(name, full)
    await _warn_unknown_keys(name, cls, full, timeout=worker.callback_timeout)
    if exactly_once:
        from engine.worker.exactly_once import check_connector

        check_connector(load_connector_class(full.get("connector.class", "")), full)
    return {k: str(v) for k, v in full.items()}
