"""Configuring a transform the way the chain does, for the per-transform tests."""

from __future__ import annotations

from typing import Any, TypeVar

from engine.api.transforms import Transformation

T = TypeVar("T", bound=Transformation[Any])


def smt(cls: type[T], **configs: str) -> T:
    """``cls`` configured with ``configs``; keys with dots are passed as ``**{"a.b": "v"}``."""
    transform = cls()
    transform.configure(configs)
    return transform
