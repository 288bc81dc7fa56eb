"""``errors.log.enable``: one ERROR event per failed record (Kafka's ``LogReporter``).

The message names the record by its coordinates only; its key, value and headers are added
(to the message and as fields) only with ``errors.log.include.messages``, since they may hold
data the log must not see.
"""

from __future__ import annotations

import structlog

from engine.api.records import ConnectRecord, SinkRecord, SourceRecord
from engine.config.secrets import hide
from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.metrics import ErrorMetrics
from engine.topics.base import ConsumedRecord


def class_name(cls: type | None) -> str:
    """Python's equivalent of Java's ``Class.getName()``: ``module.QualName``."""
    if cls is None:
        return "null"
    return f"{cls.__module__}.{cls.__qualname__}"


class LogReporter:
    def __init__(self, policy: ErrorPolicy, *, connector: str, task: int) -> None:
        self.policy = policy
        self.connector = connector
        self.task = task

    async def report(self, ctx: ProcessingContext, metrics: ErrorMetrics | None = None) -> None:
        if not self.policy.log_enable or not ctx.failed:
            return
        fields = _record_fields(ctx) if self.policy.log_include_messages else {}
        structlog.get_logger(component="errors").error(
            "task.error",
            connector=self.connector,
            task=self.task,
            stage=str(ctx.stage),
            class_name=class_name(ctx.executing_class),
            message=self.message(ctx),
            error=hide(repr(ctx.error)),  # the log processor hides it too; a capture may have none
            exc_info=ctx.error,
            **fields,
        )
        if metrics is not None:
            metrics.total_errors_logged += 1

    def message(self, ctx: ProcessingContext) -> str:
        """Kafka's text: ``Error encountered in task <c>-<n>. Executing stage '<S>' with class '<cls>'...``."""
        text = (
            f"Error encountered in task {self.connector}-{self.task}. Executing stage '{ctx.stage}' "
            f"with class '{class_name(ctx.executing_class)}'"
        )
        include = self.policy.log_include_messages
        if ctx.consumed is not None:
            text += f", where consumed record is {_consumed(ctx.consumed, include)}"
        elif ctx.sink_record is not None:
            text += f", where sink record is {_sink(ctx.sink_record, include)}"
        elif ctx.source_record is not None:
            text += f", where source record is {_source(ctx.source_record, include)}"
        return text + "."


def _consumed(record: ConsumedRecord, include: bool) -> str:
    text = (
        f"{{topic='{record.topic}', partition={record.partition}, offset={record.offset}, "
        f"timestamp={record.timestamp}"
    )
    if include:
        text += f", key={record.key!r}, value={record.value!r}, headers={list(record.headers)!r}"
    return text + "}"


def _sink(record: SinkRecord, include: bool) -> str:
    text = (
        f"{{topic='{record.topic}', partition={record.kafka_partition}, offset={record.kafka_offset}, "
        f"timestamp={record.timestamp}"
    )
    return text + (_data(record) if include else "") + "}"


def _source(record: SourceRecord, include: bool) -> str:
    text = f"{{topic='{record.topic}', partition={record.kafka_partition}, timestamp={record.timestamp}"
    if include:
        text += (
            f", sourcePartition={dict(record.source_partition)!r}, "
            f"sourceOffset={dict(record.source_offset)!r}" + _data(record)
        )
    return text + "}"


def _data(record: ConnectRecord) -> str:
    headers = [(h.key, h.value) for h in record.headers]
    return f", key={record.key!r}, value={record.value!r}, headers={headers!r}"


def _record_fields(ctx: ProcessingContext) -> dict[str, object]:
    """The record's data as event fields, for JSON logs."""
    if ctx.consumed is not None:
        return {"key": ctx.consumed.key, "value": ctx.consumed.value, "headers": list(ctx.consumed.headers)}
    record: ConnectRecord | None = ctx.sink_record or ctx.source_record
    if record is None:
        return {}
    return {"key": record.key, "value": record.value, "headers": [(h.key, h.value) for h in record.headers]}
