"""aiokafka's errors as :class:`TopicsError`, shared by the admin, producer and consumer roles."""

from __future__ import annotations

from typing import Any

from aiokafka.errors import KafkaError

from engine.config.kafka_clients.denials import denial, is_denial
from engine.storage.kafka_topic_admin import describe
from engine.topics.errors import TopicsError


def topics_error(exc: KafkaError, doing: str) -> TopicsError:
    """``Could not <doing>: <cause>``, retriable when the broker's error is."""
    return TopicsError(
        f"Could not {doing}: {describe(exc)}", retriable=bool(getattr(exc, "retriable", False))
    )


def refused(
    exc: KafkaError, doing: str, client: Any, *, operation: str, resource: str, prefix: str
) -> TopicsError:
    """``topics_error``, naming the principal, the resource and the setting when ACLs refused it."""
    if not is_denial(exc):
        return topics_error(exc, doing)
    return TopicsError(
        f"Could not {doing}: {denial(exc, client, operation=operation, resource=resource, prefix=prefix)}"
    )
