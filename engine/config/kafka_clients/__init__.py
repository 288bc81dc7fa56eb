"""Kafka client settings in one place: Connect's Java client keys translated for aiokafka.

``jaas`` parses ``sasl.jaas.config``; ``tls`` builds the ``SSLContext``; ``sasl`` the SASL
arguments and OAuth token providers; ``keys`` is the translation table; ``policy`` the override
policy; ``clients`` decides which client gets which keys (Connect's precedence).
"""

from engine.config.kafka_clients.clients import (
    NO_SETTINGS,
    OVERRIDE_PREFIXES,
    WORKER_PREFIXES,
    KafkaClients,
    key_errors,
    security_arguments,
    translate,
)
from engine.config.kafka_clients.keys import ROLES, SECRET_KEYS, Role
from engine.config.kafka_clients.policy import POLICY_KEY, OverridePolicy

__all__ = [
    "NO_SETTINGS",
    "OVERRIDE_PREFIXES",
    "POLICY_KEY",
    "ROLES",
    "SECRET_KEYS",
    "WORKER_PREFIXES",
    "KafkaClients",
    "OverridePolicy",
    "Role",
    "key_errors",
    "security_arguments",
    "translate",
]
