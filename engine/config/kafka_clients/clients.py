"""Which Kafka client settings each client gets, with Connect's precedence (Kafka's ``Worker``).

- The worker's own clients (config log, status and offset stores, group membership) get the
  top-level security and connection keys (``security.protocol``, ``ssl.*``, ``sasl.*``,
  ``retry.backoff.ms``, ``metadata.max.age.ms``, ``connections.max.idle.ms``): Connect hands its
  internal clients the worker's originals.
- Connectors' producers get ``producer.*`` only and their consumers ``consumer.*`` only
  (``Worker.baseProducerConfigs`` / ``baseConsumerConfigs``): a secured cluster needs the security
  keys repeated under those prefixes, exactly as in Connect. Their admin clients get the top-level
  keys, then ``admin.*`` (``Worker.adminConfigs``).
- Then a connector's ``producer.override.*``, ``consumer.override.*``, ``admin.override.*``, as far as
  ``connector.client.config.override.policy`` allows (``Worker.connectorClientConfigOverrides``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine.config.kafka_clients.keys import (
    ROLES,
    SECURITY_KEYS,
    SECURITY_PROTOCOLS,
    TABLES,
    UNSUPPORTED,
    BadValue,
    Role,
    Translation,
    describe_key,
)
from engine.config.kafka_clients.policy import OverridePolicy
from engine.config.kafka_clients.sasl import sasl_arguments
from engine.config.kafka_clients.tls import client_context
from engine.config.providers import ConfigTransformer, has_references
from engine.errors import ConfigError

WORKER_PREFIXES: dict[Role, str] = {"producer": "producer.", "consumer": "consumer.", "admin": "admin."}
OVERRIDE_PREFIXES: dict[Role, str] = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
}
# top-level connection keys the worker's own clients take; the rest of _COMMON the worker reads itself
# (bootstrap.servers; client.id and request.timeout.ms belong to the group membership)
_TOP_LEVEL_COMMON = (
    "retry.backoff.ms",
    "metadata.max.age.ms",
    "connections.max.idle.ms",
    "metadata.recovery.strategy",
    "metadata.cluster.check.enable",
    "bootstrap.resolve.timeout.ms",
)
# top-level keys the worker reads for itself although Kafka's clients know them too
_WORKER_OWN = frozenset(
    {
        "bootstrap.servers",
        "group.id",
        "client.id",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "request.timeout.ms",
    }
)

NameOf = Callable[[str], str]
log = structlog.get_logger(component="kafka-clients")


def _same(key: str) -> str:
    return key


def _prefixer(prefix: str) -> NameOf:
    return lambda key: prefix + key


def _is_security(key: str) -> bool:
    return key in SECURITY_KEYS or key.startswith(("ssl.", "sasl."))


def key_errors(
    props: Mapping[str, str], role: Role, *, name_of: NameOf = _same, check_values: bool = True
) -> dict[str, list[str]]:
    """Every unknown, unsupported or malformed key of ``props`` (unprefixed), named by ``name_of``.

    Values holding ``${provider:...}`` references are checked only once resolved.
    """
    errors: dict[str, list[str]] = {}
    for key, value in props.items():
        name = name_of(key)
        if _is_security(key) and key not in UNSUPPORTED:
            if key not in SECURITY_KEYS:
                errors[name] = [f"Unknown configuration '{name}': not a Kafka {role} client setting"]
            elif (
                key == "security.protocol"
                and check_values
                and not has_references(value)
                and value.strip().upper() not in SECURITY_PROTOCOLS
            ):
                errors[name] = [
                    f"Invalid value {value} for configuration {name}: String must be one of: "
                    f"{', '.join(SECURITY_PROTOCOLS)}"
                ]
            continue
        found = describe_key(key, role)
        if found is None:
            errors[name] = [f"Unknown configuration '{name}': not a Kafka {role} client setting"]
        elif isinstance(found, str):
            errors[name] = [f"Configuration '{name}' is {found}"]
        elif check_values and not has_references(value):
            try:
                found.convert(value)
            except BadValue as exc:
                errors[name] = [f"Invalid value {value} for configuration {name}: {exc}"]
    return errors


def _raise(errors: Mapping[str, list[str]]) -> None:
    if errors:
        lines = "; ".join(m for messages in errors.values() for m in messages)
        raise ConfigError(lines, errors=dict(errors))


def _renamed(exc: ConfigError, name_of: NameOf) -> ConfigError:
    errors = {name_of(k): v for k, v in (exc.errors or {}).items()}
    message = str(exc)
    for key in exc.errors or {}:
        message = message.replace(f"configuration {key}:", f"configuration {name_of(key)}:")
    return ConfigError(message, errors=errors)


def _file_stamp(path: str) -> tuple[str, float]:
    try:
        return path, os.stat(path).st_mtime
    except OSError:
        return path, -1.0


@functools.lru_cache(maxsize=64)
def _cached_security(
    items: tuple[tuple[str, str], ...], stamps: tuple[tuple[str, float], ...]
) -> dict[str, Any]:
    """One SSL context (tens of ms: stores, system CAs) and token provider per distinct setting, shared by
    every client that has it; a store file changed on disk (``stamps``) makes a new one."""
    return _security(dict(items))


def security_arguments(props: Mapping[str, str], *, name_of: NameOf = _same) -> dict[str, Any]:
    """aiokafka's ``security_protocol``, ``ssl_context`` and ``sasl_*`` from Java's security keys."""
    security = tuple(sorted((k, v) for k, v in props.items() if _is_security(k)))
    stamps = tuple(_file_stamp(v) for k, v in security if k.endswith(".location"))
    try:
        return dict(_cached_security(security, stamps))
    except ConfigError as exc:
        raise _renamed(exc, name_of) from None


def _security(props: Mapping[str, str]) -> dict[str, Any]:
    protocol = (props.get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        key = "security.protocol"
        raise ConfigError(
            f"Invalid value {protocol} for configuration {key}: String must be one of: "
            f"{', '.join(SECURITY_PROTOCOLS)}",
            errors={key: ["unknown security protocol"]},
        )
    args: dict[str, Any] = {"security_protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        args["ssl_context"] = client_context(props)
    if protocol.startswith("SASL_"):
        args.update(sasl_arguments(props))
    return args


def translate(props: Mapping[str, str], role: Role, *, name_of: NameOf = _same) -> dict[str, Any]:
    """aiokafka keyword arguments for a ``role`` client from Java client keys (unprefixed, resolved).

    ``ConfigError`` names every key at fault as the user wrote it (``name_of`` adds the prefix).
    """
    _raise(key_errors(props, role, name_of=name_of))
    table: Mapping[str, Translation] = TABLES[role]
    args: dict[str, Any] = {}
    for key, value in props.items():
        found = table.get(key)
        if found is not None and found.argument is not None:
            args[found.argument] = found.convert(value)
    if any(_is_security(k) for k in props):
        args.update(security_arguments(props, name_of=name_of))
    return args


def with_prefix(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    """Kafka's ``originalsWithPrefix``: the keys under ``prefix``, prefix stripped."""
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _admin_client_keys(raw: Mapping[str, str]) -> dict[str, str]:
    """The worker's ``admin.*`` client keys: all but KIP-208's ``admin.listeners`` and its ``admin.listeners.https.*``,
    which are REST settings."""
    return {
        k: v
        for k, v in with_prefix(raw, "admin.").items()
        if k != "listeners" and not k.startswith("listeners.")
    }


def _top_level(raw: Mapping[str, str]) -> dict[str, str]:
    """The top-level keys meant for Kafka clients; ``ConfigError`` for client keys a worker cannot take there."""
    chosen: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    for key, value in raw.items():
        if key.startswith(("producer.", "consumer.", "admin.")) or key in _WORKER_OWN:
            continue
        if _is_security(key) or key in _TOP_LEVEL_COMMON or key in UNSUPPORTED:
            chosen[key] = value
            continue
        for role in ROLES:
            if key in TABLES[role]:
                errors[key] = [
                    f"'{key}' is a {role} setting: set {WORKER_PREFIXES[role]}{key} for connectors' "
                    f"{role}s (the worker's own clients keep Connect's settings)"
                ]
                break
    _raise(errors)
    return chosen


@dataclass(frozen=True, slots=True)
class KafkaClients:
    """The worker's Kafka client settings, checked at start-up; ``NO_SETTINGS`` when none are given."""

    own_props: Mapping[str, str] = field(default_factory=dict)
    task_props: Mapping[Role, Mapping[str, str]] = field(default_factory=lambda: {r: {} for r in ROLES})
    policy: OverridePolicy = field(default_factory=lambda: OverridePolicy("All"))
    own_args: Mapping[str, Any] = field(default_factory=dict)
    task_args: Mapping[Role, Mapping[str, Any]] = field(default_factory=lambda: {r: {} for r in ROLES})

    @classmethod
    def from_worker(
        cls, raw: Mapping[str, str], transformer: ConfigTransformer | None = None
    ) -> KafkaClients:
        """Translate every client key of the worker properties now, so a bad one stops the start-up."""
        policy = OverridePolicy.parse(raw)
        own = _top_level(raw)
        tasks: dict[Role, dict[str, str]] = {
            "producer": with_prefix(raw, "producer."),
            "consumer": with_prefix(raw, "consumer."),
            "admin": {**own, **_admin_client_keys(raw)},
        }
        resolve = transformer.resolve if transformer is not None else dict
        own = resolve(own)
        tasks = {role: resolve(props) for role, props in tasks.items()}
        errors: dict[str, list[str]] = {}
        if "group.id" in tasks["consumer"]:
            errors["consumer.group.id"] = [
                "consumer.group.id is not supported: one group for every sink connector "
                "would make them share their partitions: set consumer.override.group.id "
                "per connector"
            ]
        for role in ("producer", "consumer"):  # every bad key at once; admin's are the top level's + admin.*
            errors.update(key_errors(tasks[role], role, name_of=_prefixer(WORKER_PREFIXES[role])))
        errors.update(key_errors(_admin_client_keys(raw), "admin", name_of=_prefixer("admin.")))
        errors.update(key_errors(own, "admin"))
        _raise(errors)
        # the own clients: all three roles share the top-level keys, which are common to every role
        own_args = translate(own, "admin")
        task_args: dict[Role, Mapping[str, Any]] = {
            role: translate(props, role, name_of=_prefixer(WORKER_PREFIXES[role]))
            for role, props in tasks.items()
        }
        protocol = raw.get("security.protocol", "PLAINTEXT").strip().upper()
        unused = sorted(k for k in own if k.startswith("sasl."))  # (ssl.* serve an HTTPS listener too)
        if not protocol.startswith("SASL_") and unused:  # as in Java, not an error: said once, at start-up
            log.warning("kafka_clients.security_keys_unused", security_protocol=protocol, keys=unused)
        return cls(own, tasks, policy, own_args, task_args)

    def own(self) -> dict[str, Any]:
        """Arguments for the worker's own producers, consumers and admin clients."""
        return dict(self.own_args)

    def worker_level(self, role: Role) -> dict[str, Any]:
        """Arguments for connectors' ``role`` clients before any connector override."""
        return dict(self.task_args[role])

    def override_errors(
        self, config: Mapping[str, str | None], role: Role, *, check_values: bool = True
    ) -> dict[str, list[str]]:
        """A connector's ``<role>.override.*`` problems: refused by the policy, unknown, unsupported, malformed."""
        prefix = OVERRIDE_PREFIXES[role]
        overrides = {
            k: v or "" for k, v in with_prefix({k: v or "" for k, v in config.items()}, prefix).items()
        }
        errors: dict[str, list[str]] = {}
        for key in overrides:
            refusal = self.policy.refusal(key)
            if refusal is not None:
                errors[prefix + key] = [refusal]
        for name, messages in key_errors(
            overrides, role, name_of=lambda k: prefix + k, check_values=check_values
        ).items():
            errors.setdefault(name, []).extend(messages)
        security = {k: v for k, v in overrides.items() if _is_security(k)}
        if check_values and security and not errors and not any(has_references(v) for v in security.values()):
            try:  # the JAAS text, the stores: what the task's client would refuse at start
                security_arguments(
                    {**self.task_props[role], **overrides}, name_of=self._name_of(role, overrides)
                )
            except ConfigError as exc:
                for name, messages in (exc.errors or {}).items():
                    errors.setdefault(name, []).extend(
                        m if m.startswith("Invalid") else f"Invalid value for configuration {name}: {m}"
                        for m in messages
                    )
        return errors

    @staticmethod
    def _name_of(role: Role, overrides: Mapping[str, str]) -> NameOf:
        prefix, worker_prefix = OVERRIDE_PREFIXES[role], WORKER_PREFIXES[role]
        return lambda key: prefix + key if key in overrides else worker_prefix + key

    def for_connector(self, role: Role, config: Mapping[str, str]) -> dict[str, Any]:
        """Arguments for a connector's ``role`` client: worker-level, then its overrides (``config`` resolved)."""
        prefix = OVERRIDE_PREFIXES[role]
        overrides = with_prefix(config, prefix)
        if not overrides:
            return self.worker_level(role)
        refused = [prefix + k for k in overrides if not self.policy.allows(k)]
        if refused:  # validation refuses these first; a config written before the policy changed lands here
            raise ConfigError(
                f"Client Config Overrides not allowed {refused}: the '{self.policy.name}' policy does "
                "not allow them to be overridden in the connector configuration.",
                errors={k: ["not allowed by connector.client.config.override.policy"] for k in refused},
            )
        return translate({**self.task_props[role], **overrides}, role, name_of=self._name_of(role, overrides))

    def missing_security(self, role: Role, config: Mapping[str, str]) -> str | None:
        """Why a connector's ``role`` client may fail where the worker's own clients connect: the top-level
        security keys that neither ``<role>.*`` nor the connector's ``<role>.override.*`` repeat, as advice
        to append to its failure; None when nothing is missing (or ``role`` is the admin, which inherits)."""
        if role == "admin":
            return None
        own = (self.own_props.get("security.protocol") or "PLAINTEXT").strip().upper()
        if own == "PLAINTEXT":
            return None
        prefix, override = WORKER_PREFIXES[role], OVERRIDE_PREFIXES[role]
        effective = {**self.task_props[role], **with_prefix(config, override)}
        wanted = [
            "security.protocol",
            *sorted(
                k
                for k in self.own_props
                if (k.startswith("ssl.") and "SSL" in own)
                or (k.startswith("sasl.") and own.startswith("SASL_"))
            ),
        ]
        missing = [k for k in wanted if k not in effective]
        if not missing:
            return None
        theirs = (effective.get("security.protocol") or "PLAINTEXT").strip().upper()
        return (
            f"Connectors' {role}s get the worker's {prefix}* settings and the connector's {override}*, never the "
            f"top-level ones (as in Kafka Connect): the worker's own clients use security.protocol={own}, this "
            f"{role} security.protocol={theirs}. Set {', '.join(prefix + k for k in missing)} in the worker "
            f"config (or {override}* in the connector's, as connector.client.config.override.policy allows)"
        )


NO_SETTINGS = KafkaClients()
