"""Exactly-once source support (KIP-618): what a connector declares, and a task's transaction control."""

from __future__ import annotations

from enum import StrEnum

from engine.api.records import SourceRecord


class ExactlyOnceSupport(StrEnum):
    """``SourceConnector.exactly_once_support``: can the connector's tasks deliver exactly once?"""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(StrEnum):
    """``SourceConnector.can_define_transaction_boundaries``: may ``transaction.boundary=connector`` be used?"""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class TransactionContext:
    """Given to tasks of a connector with ``transaction.boundary=connector``: the task says when a
    transaction ends. Requests apply after the current ``poll()`` batch has been sent."""

    def __init__(self) -> None:
        self.commit_requested = False
        self.abort_requested = False
        self.commit_after: SourceRecord | None = None
        self.abort_after: SourceRecord | None = None

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after this batch (or, with ``record``, after that record of the batch)."""
        if record is None:
            self.commit_requested = True
        else:
            self.commit_after = record

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort the open transaction after this batch (or after ``record``): its records and offsets vanish."""
        if record is None:
            self.abort_requested = True
        else:
            self.abort_after = record

    def take(self) -> str | None:
        """The request to act on now (``"commit"``/``"abort"``), cleared once taken."""
        action = (
            "abort"
            if self.abort_requested or self.abort_after is not None
            else ("commit" if self.commit_requested or self.commit_after is not None else None)
        )
        self.commit_requested = self.abort_requested = False
        self.commit_after = self.abort_after = None
        return action
