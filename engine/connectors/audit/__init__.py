"""The audit-table source: row changes captured by triggers, streamed as records, cleaned up on delete."""

from __future__ import annotations

from engine.connectors.audit.connector import AuditTableSourceConnector
from engine.connectors.audit.task import AuditTableSourceTask

__all__ = ["AuditTableSourceConnector", "AuditTableSourceTask"]
