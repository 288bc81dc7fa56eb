"""Which log a stored position belongs to: the Kafka cluster and the topic (KIP-516's topic id).

A topic's name outlives the topic (delete it and create it again, or point the worker at another
cluster), and an offset means nothing in another log. Whatever keeps a sink position (the consumer
group's commit metadata, a sink's own manifests) keeps its ``TopicIdentity`` beside it, so that a
position from another cluster or an older topic of the same name is never applied silently.
"""

from __future__ import annotations

import json
from typing import NamedTuple


class TopicIdentity(NamedTuple):
    """A topic as one cluster knows it: the cluster's id and the topic's id (a UUID, base64 as Kafka
    prints it). In-process topics have ids too, kept with their data."""

    cluster_id: str
    topic_id: str

    def __str__(self) -> str:
        return f"cluster {self.cluster_id}, topic id {self.topic_id}"

    def to_json(self) -> dict[str, str]:
        return {"cluster_id": self.cluster_id, "topic_id": self.topic_id}

    @classmethod
    def from_json(cls, raw: object) -> TopicIdentity | None:
        """The identity a stored ``{"cluster_id": ..., "topic_id": ...}`` names; None for anything else
        (a position stored before identities were kept)."""
        if not isinstance(raw, dict):
            return None
        cluster_id, topic_id = raw.get("cluster_id"), raw.get("topic_id")
        if not isinstance(cluster_id, str) or not isinstance(topic_id, str) or not cluster_id or not topic_id:
            return None
        return cls(cluster_id, topic_id)

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)
