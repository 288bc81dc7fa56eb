"""The commit metadata a sink writes: the leader epoch and the log's identity, and what older or
foreign metadata reads as."""

from __future__ import annotations

import pytest

from engine.api import TopicIdentity
from engine.topics.commit_metadata import NO_EPOCH, CommitMetadata, decode
from engine.topics.leader_epochs import commit_metadata, epoch_of_metadata

IDENTITY = TopicIdentity("WkbGbToAR6GrQ8v-MnG4fg", "c8_AZdxaQ-Ol4mSfLPW5NA")


def test_epoch_and_identity_round_trip_in_well_under_kafkas_limit() -> None:
    text = CommitMetadata(7, IDENTITY).encode()
    assert decode(text) == CommitMetadata(7, IDENTITY)
    assert len(text.encode()) < 4096  # offset.metadata.max.bytes


def test_an_identity_without_an_epoch() -> None:
    assert decode(CommitMetadata(identity=IDENTITY).encode()) == CommitMetadata(NO_EPOCH, IDENTITY)


def test_the_form_written_before_identities_is_still_read() -> None:
    assert commit_metadata(5) == "leader_epoch=5"
    assert decode("leader_epoch=5") == CommitMetadata(5, None)
    assert epoch_of_metadata(CommitMetadata(9, IDENTITY).encode()) == 9


@pytest.mark.parametrize(
    "foreign",
    [None, "", "leader_epoch=x", "{", "[1]", '{"leader_epoch": true}', '{"cluster_id": 1}', "hello"],
)
def test_another_clients_metadata_carries_nothing(foreign: str | None) -> None:
    assert decode(foreign) == CommitMetadata()
