"""File source and sink like Kafka's FileStream example: lines in, lines out, byte-offset resume."""

from __future__ import annotations

from engine.connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from engine.connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = [
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]
