"""``connector.client.config.override.policy`` (KIP-458): which ``*.override.*`` keys a connector may set.

Kafka's four policies by their aliases or class names: ``All`` (the default) allows every key,
``None`` none, ``Principal`` only ``sasl.jaas.config``, ``sasl.mechanism`` and ``security.protocol``,
and ``Allowlist`` (KIP-1188, Kafka 4.2) the keys the worker lists in
``connector.client.config.override.allowlist`` (none when the list is empty). A refused key gets
Connect's message (``AbstractConnectorClientConfigOverridePolicy``). ``Principal``, deprecated in
Kafka 4.2, logs Connect's deprecation warning; the allowlist is a strict list (KIP-1161).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import structlog

from engine.errors import ConfigError

log = structlog.get_logger(component="kafka-clients")

POLICY_KEY = "connector.client.config.override.policy"
ALLOWLIST_KEY = "connector.client.config.override.allowlist"
_PACKAGE = "org.apache.kafka.connect.connector.policy."
_ALLOWED: dict[str, frozenset[str] | None] = {
    "All": None,
    "None": frozenset(),
    "Principal": frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"}),
    "Allowlist": frozenset(),
}
_LIST_SEPARATOR = re.compile(r"\s*,\s*")


# Connect's text names the Principal keys in its HashSet's order
_PRINCIPAL_AS_ALLOWLIST = "security.protocol,sasl.mechanism,sasl.jaas.config"


def _parse_list(text: str) -> frozenset[str]:
    """``ConfigDef`` LIST parsing under Kafka 4.2's ``ValidList.anyNonDuplicateValues(true, false)``
    (KIP-1161): comma-separated, whitespace around items trimmed, empty text no items, an empty item
    refused (duplicates are harmless in a set)."""
    trimmed = text.strip()
    items = _LIST_SEPARATOR.split(trimmed) if trimmed else []
    if "" in items:
        message = f"Configuration '{ALLOWLIST_KEY}' values must not be empty."
        raise ConfigError(message, errors={ALLOWLIST_KEY: [message]})
    return frozenset(items)


@dataclass(frozen=True, slots=True)
class OverridePolicy:
    name: str  # All, None, Principal, Allowlist
    allowlist: frozenset[str] = frozenset()  # Allowlist only: connector.client.config.override.allowlist

    @classmethod
    def parse(cls, worker: Mapping[str, str]) -> OverridePolicy:
        raw = (worker.get(POLICY_KEY) or "All").strip()
        for name in _ALLOWED:
            if raw in (
                name,
                f"{name}ConnectorClientConfigOverridePolicy",
                f"{_PACKAGE}{name}ConnectorClientConfigOverridePolicy",
            ):
                if name == "Allowlist":
                    return cls(name, _parse_list(worker.get(ALLOWLIST_KEY) or ""))
                if name == "Principal":
                    log.warning(
                        "kafka_clients.policy_deprecated",
                        policy=name,
                        reason="The Principal ConnectorClientConfigOverridePolicy is deprecated, use the "
                        "Allowlist policy instead. To replicate the Principal policy behavior, set the "
                        f'{ALLOWLIST_KEY} configuration to "{_PRINCIPAL_AS_ALLOWLIST}"',
                    )
                return cls(name)
        message = (
            f"Invalid value {raw} for configuration {POLICY_KEY}: choose All, None, Principal or Allowlist "
            "(custom policy classes are not supported)"
        )
        raise ConfigError(message, errors={POLICY_KEY: [message]})

    def allows(self, key: str) -> bool:
        if self.name == "Allowlist":
            return key in self.allowlist
        allowed = _ALLOWED[self.name]
        return allowed is None or key in allowed

    def refusal(self, key: str) -> str | None:
        """Connect's message for an override ``key`` (unprefixed) this policy refuses; None if allowed."""
        if self.allows(key):
            return None
        return f"The '{self.name}' policy does not allow '{key}' to be overridden in the connector configuration."
