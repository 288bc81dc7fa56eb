"""``connector.client.config.override.policy`` (KIP-458): which ``*.override.*`` keys a connector may set.

Kafka's four policies by their aliases or class names: ``All`` (the default) allows every key,
``None`` none, ``Principal`` only ``sasl.jaas.config``, ``sasl.mechanism`` and ``security.protocol``,
and ``Allowlist`` (KIP-1188, Kafka 4.2) the keys the worker lists in
``connector.client.config.override.allowlist`` (none when the list is empty). A refused key gets
Connect's message (``AbstractConnectorClientConfigOverridePolicy``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import ConfigError

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


def _parse_list(text: str) -> frozenset[str]:
    """``ConfigDef`` LIST parsing: comma-separated, whitespace around items trimmed, empty text no items."""
    trimmed = text.strip()
    return frozenset(_LIST_SEPARATOR.split(trimmed)) if trimmed else frozenset()


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
