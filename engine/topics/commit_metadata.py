"""What a sink's committed group offset carries in its ``metadata`` string: the leader epoch of the
record before it (KIP-320) and the identity of the log it counts in (cluster id, topic id: KIP-516).

aiokafka's OffsetCommit stops at version 3, before the ``committed_leader_epoch`` field, and no
version has a place for the identity, so both go in the metadata, as one JSON object
(``{"leader_epoch": 7, "cluster_id": "...", "topic_id": "..."}``; Kafka's
``offset.metadata.max.bytes`` is 4,096 bytes, this stays below 120). The form written before
identities were kept, ``leader_epoch=7``, is still read.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from engine.api.identity import TopicIdentity

NO_EPOCH = -1
_LEGACY_PREFIX = "leader_epoch="


class CommitMetadata(NamedTuple):
    epoch: int = NO_EPOCH
    identity: TopicIdentity | None = None

    def encode(self) -> str:
        if self.identity is None:
            return f"{_LEGACY_PREFIX}{self.epoch}" if self.epoch >= 0 else ""
        body: dict[str, object] = dict(self.identity.to_json())
        if self.epoch >= 0:
            body["leader_epoch"] = self.epoch
        return json.dumps(body, sort_keys=True, separators=(",", ":"))


def decode(metadata: str | None) -> CommitMetadata:
    """Whatever ``metadata`` carries; anything unreadable (another client's metadata) carries nothing."""
    if not metadata:
        return CommitMetadata()
    if metadata.startswith(_LEGACY_PREFIX):
        try:
            return CommitMetadata(int(metadata[len(_LEGACY_PREFIX) :]))
        except ValueError:
            return CommitMetadata()
    if not metadata.startswith("{") or len(metadata) > 4096:
        return CommitMetadata()
    try:
        body = json.loads(metadata)
    except ValueError:
        return CommitMetadata()
    if not isinstance(body, dict):
        return CommitMetadata()
    epoch = body.get("leader_epoch", NO_EPOCH)
    return CommitMetadata(
        epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else NO_EPOCH,
        TopicIdentity.from_json(body),
    )
