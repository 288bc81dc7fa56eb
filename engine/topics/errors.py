"""Errors of the topics layer.

* EngineError
  x TopicsError        a topic could not be created, written or read; ``retriable`` as the cause says
    + UnknownTopic     the topic does not exist
    + NotAssigned      a partition this consumer does not own was seeked, committed or asked about
    + GroupNotEmpty    a group's offsets were altered while a member was still in it
"""

from __future__ import annotations

from engine.errors import EngineError


class TopicsError(EngineError):
    """``retriable`` is per instance here: Kafka's error says whether a retry can help."""

    def __init__(self, message: str, *, retriable: bool = False) -> None:
        super().__init__(message)
        self.retriable = retriable  # type: ignore[misc]


class UnknownTopic(TopicsError):
    def __init__(self, topic: str) -> None:
        super().__init__(f"Topic '{topic}' does not exist")
        self.topic = topic


class NotAssigned(TopicsError):
    def __init__(self, topic: str, partition: int) -> None:
        super().__init__(f"Partition {topic}-{partition} is not assigned to this consumer")
        self.topic = topic
        self.partition = partition


class GroupNotEmpty(TopicsError):
    """Kafka's ``UnknownMemberIdException``/``GroupSubscribedToTopicException`` for an admin write."""

    def __init__(self, group: str) -> None:
        super().__init__(f"Consumer group {group} still has members", retriable=True)
        self.group = group
