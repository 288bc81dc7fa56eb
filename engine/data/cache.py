"""``LRUCache``: the bounded schema caches of converters and transforms (Kafka's ``LRUCache``).

It sits in ``engine.data`` because both converters and transforms build on this package, and
what they cache is schemas: the JSON converter's schema <-> JSON, a transform's input schema ->
output schema.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["LRUCache"]

K = TypeVar("K")
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A map of at most ``size`` entries; a read refreshes an entry, the least recently used goes first.

    Not thread-safe: each converter or transform instance owns its cache and runs on one task.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()
