"""The names nearest to one that names nothing: the "did you mean" of every class-not-found message.

A mistyped name is compared with each candidate whole (``org.apache.kafka.connect.json.JsonConvertr``)
and by its last dotted part with theirs (``com.acme.FileStreamSourc`` and ``FileStreamSource``), or as
a part of theirs (``Postgres``), case ignored; only the closest few are named, so a message stays one short line instead of listing all.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable, Iterable

__all__ = ["did_you_mean", "nearest"]

_CUTOFF = 0.75  # below this a suggestion reads as noise
_SPREAD = 0.05  # only the candidates about as close as the closest: one typo has one or two readings


def _tail(name: str) -> str:
    return name.replace(":", ".").rsplit(".", 1)[-1]


def _score(wanted: str, candidate: str) -> float:
    whole = difflib.SequenceMatcher(None, wanted, candidate).ratio()
    tail = difflib.SequenceMatcher(None, _tail(wanted), _tail(candidate)).ratio()
    # part of the name (``Postgres`` for ``PostgresCdcSource``) counts as close, however short
    part = _CUTOFF if len(_tail(wanted)) >= 4 and _tail(wanted) in _tail(candidate) else 0.0
    return max(whole, tail, part)


def nearest(
    name: str, candidates: Iterable[str], *, limit: int = 3, same: Callable[[str], Hashable] | None = None
) -> list[str]:
    """Up to ``limit`` of ``candidates`` closest to ``name``, closest first (none when nothing is close).

    ``same``: what a candidate stands for (its class), so several names of one class count once."""
    wanted = name.strip().lower()
    scored: dict[str, float] = {}
    for candidate in candidates:
        if candidate not in scored:
            scored[candidate] = _score(wanted, candidate.lower())
    if not scored:
        return []
    best = max(scored.values())
    close = [c for c, s in scored.items() if s >= _CUTOFF and s >= best - _SPREAD]
    chosen: dict[Hashable, str] = {}
    for candidate in sorted(close, key=lambda c: (-scored[c], len(c))):
        chosen.setdefault(candidate if same is None else same(candidate), candidate)
    return list(chosen.values())[:limit]


def did_you_mean(
    name: str, candidates: Iterable[str], *, limit: int = 3, same: Callable[[str], Hashable] | None = None
) -> str:
    """`` Did you mean 'a' or 'b'?`` (with its leading space), or ``""`` when nothing is close."""
    found = nearest(name, candidates, limit=limit, same=same)
    if not found:
        return ""
    quoted = [f"'{n}'" for n in found]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" Did you mean {listed}?"
