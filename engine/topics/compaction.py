"""Log compaction (``cleanup.policy=compact``): keep the latest record of each key.

A pass cleans every segment but the newest, as Kafka's cleaner leaves the active segment alone.
The latest offset of each key comes from the whole partition, newest segment and unflushed
records included, so a key's older records go once a newer one exists anywhere. A tombstone that
is the latest of its key is kept until it is older than ``delete.retention.ms`` (measured from
its own timestamp, where Kafka counts from the pass that first cleaned it): long enough for
readers to see the deletion. Records without a key are never dropped (a compacted topic refuses
new ones, as Kafka does).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from engine.topics.base import ConsumedRecord
from engine.topics.segment import Finish, Segment

Prepared = list[tuple[Segment, Finish]]


def prepare(
    sealed: Sequence[Segment],
    newest: Segment,
    unflushed: Sequence[tuple[bytes | None, int]],
    tombstone_cutoff: int,
) -> Prepared:
    """Reads the partition and prepares a rewrite of each of ``sealed`` that loses records; safe in a thread."""
    latest: dict[bytes, int] = {}
    for segment in [*sealed, newest]:
        for record in segment.scan():
            if record.key is not None:
                latest[record.key] = record.offset
    latest.update((key, offset) for key, offset in unflushed if key is not None)

    def keep(record: ConsumedRecord) -> bool:
        if record.key is None:
            return True
        if latest.get(record.key, record.offset) != record.offset:
            return False
        return record.value is not None or record.timestamp >= tombstone_cutoff

    prepared: Prepared = []
    try:
        for segment in sealed:
            if (finish := segment.rewrite(keep)) is not None:
                prepared.append((segment, finish))
    except BaseException:
        discard(prepared)
        raise
    return prepared


def discard(prepared: Prepared) -> None:
    for _, finish in prepared:
        finish(False)


async def in_thread(work: Callable[[], Prepared]) -> Prepared:
    """Run a pass off the event loop; if the caller is cancelled, wait for the thread and throw its work away,
    so no temp file is written after the topics closed."""
    future = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # a failed pass left nothing to throw away
            discard(await future)
        raise
