"""Helpers for testing connectors and lifecycles: instrumented connectors and their call log."""

from __future__ import annotations

from engine.testing.faults import FAULTS, FaultAction, Faults, SimulatedCrash
from engine.testing.recording import (
    CALLS,
    Call,
    CallLog,
    RecordingSinkConnector,
    RecordingSinkTask,
    RecordingSourceConnector,
    RecordingSourceTask,
    instrumented,
)
from engine.testing.timers import VirtualTimers
from engine.testing.transitions import TransitionRecorder, assert_transitions, describe
from engine.testing.waiting import eventually

__all__ = [
    "CALLS",
    "FAULTS",
    "Call",
    "CallLog",
    "FaultAction",
    "Faults",
    "RecordingSinkConnector",
    "RecordingSinkTask",
    "RecordingSourceConnector",
    "RecordingSourceTask",
    "SimulatedCrash",
    "TransitionRecorder",
    "VirtualTimers",
    "assert_transitions",
    "describe",
    "eventually",
    "instrumented",
]
