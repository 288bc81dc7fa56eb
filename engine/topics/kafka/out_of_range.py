"""Positions a Kafka broker answered OFFSET_OUT_OF_RANGE, as aiokafka's consumer resets them.

aiokafka applies ``auto_offset_reset`` itself when a fetch is answered out of range, and tells only
its own logger, at INFO; its caller never learns that the position moved. ``install`` wraps the
partition state's ``await_reset`` so that a reset from a valid position leaves that position behind
on the state, and wraps ``reset_to`` to note where the reset took it: the fetcher's out-of-range answer is the only such reset on our consumers (they call
no ``seek_to_*``; the initial reset of a partition with no committed offset has no position yet).
``resolved`` hands it over once the new position is known, for the consumer to report.

This is the one way a Kafka consumer's position moves without being asked, besides a KIP-320
divergence (``engine.topics.leader_epochs``): a high watermark seen by the consumer can lag behind a
leader change (KIP-207), so it is never compared with the position here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.consumer.subscription_state import TopicPartitionState

_MARK = "_connect_engine_out_of_range"  # [position, strategy, reset_to] left on a TopicPartitionState


class Resolved(NamedTuple):
    position: int  # the offset the fetch asked for
    reset: str  # earliest or latest
    reset_to: int


def install() -> None:
    """Idempotent: wraps ``TopicPartitionState.await_reset`` and ``reset_to`` once per process."""
    await_reset, reset_to = TopicPartitionState.await_reset, TopicPartitionState.reset_to
    if getattr(await_reset, "_connect_engine_wrapped", False):
        return

    def noting_await_reset(self: Any, strategy: int) -> None:
        if self.has_valid_position:
            setattr(self, _MARK, [self.position, strategy, None])
        await_reset(self, strategy)

    def noting_reset_to(self: Any, position: int) -> None:
        mark = getattr(self, _MARK, None)
        if mark is not None and mark[2] is None:
            mark[2] = int(position)
        reset_to(self, position)

    noting_await_reset._connect_engine_wrapped = True  # type: ignore[attr-defined]
    TopicPartitionState.await_reset = noting_await_reset
    TopicPartitionState.reset_to = noting_reset_to


def resolved(state: Any) -> Resolved | None:
    """The out-of-range reset ``state`` went through, once its new position is known (then forgotten)."""
    mark = getattr(state, _MARK, None)
    if mark is None or mark[2] is None:
        return None
    setattr(state, _MARK, None)
    position, strategy, reset_to = mark
    return Resolved(position, OffsetResetStrategy.to_str(strategy), reset_to)


def forget(state: Any) -> None:
    """A seek made by the consumer's owner supersedes a reset not yet reported."""
    setattr(state, _MARK, None)
