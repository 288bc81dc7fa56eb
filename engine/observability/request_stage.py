"""What the current request is waiting on, for Connect's "Request timed out" messages.

Set with ``enter_stage`` as an operation progresses and deliberately never reset: when a
caller's timeout fires, the last stage entered is the one that hung. Context variables are
per task, so concurrent requests never see each other's stages.
"""

from __future__ import annotations

from contextvars import ContextVar

_stage: ContextVar[str | None] = ContextVar("connect_engine_stage", default=None)


def enter_stage(description: str) -> None:
    """``description`` completes "The worker is currently ...", e.g. "starting the connector"."""
    _stage.set(description)


def current_stage() -> str | None:
    return _stage.get()


def timed_out_message(stage: str | None) -> str:
    return f"Request timed out. The worker is currently {stage or 'processing the request'}"
