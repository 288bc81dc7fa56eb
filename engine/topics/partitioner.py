"""Kafka's default partitioner: murmur2 of the key bytes, made positive, modulo the partition count.

A record keyed the same way lands in the same partition in the in-process log and on Kafka, so
a topic written by one can be read as if written by the other.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """``org.apache.kafka.common.utils.Utils.murmur2``: a signed 32-bit int, as Java returns it."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = length % 4
    if tail >= 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number: int) -> int:
    """``Utils.toPositive``: clear the sign bit (not ``abs``, which differs for negative numbers)."""
    return number & 0x7FFFFFFF


def partition_for_key(key: bytes, partitions: int) -> int:
    return to_positive(murmur2(key)) % partitions


class Partitioner:
    """Keys by murmur2; null keys round-robin with one counter per producer (shared by its topics).

    Round-robin rather than Kafka's sticky batches: it spreads a few records evenly, which tests
    and small embedded topics notice, and batching matters little in-process. Also usable as
    aiokafka's ``partitioner`` callable.
    """

    def __init__(self) -> None:
        self._counter = itertools.count()

    def partition(self, key: bytes | None, partitions: int) -> int:
        if key is None:
            return next(self._counter) % partitions
        return partition_for_key(key, partitions)

    def __call__(self, key: bytes | None, all_partitions: Sequence[int], available: Sequence[int]) -> int:
        return all_partitions[self.partition(key, len(all_partitions))]
