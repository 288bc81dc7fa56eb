"""``errors.deadletterqueue.*``: records that failed go to a topic (Kafka's ``DeadLetterQueueReporter``).

For a sink, what failed is the raw record the consumer read (key, value and headers as bytes,
untouched by converters or SMTs), so it can be replayed. Sources have a dead letter queue too (our
addition: Connect's is sink-only): a source record has no raw form, so the loop hands the reporter
a ``SourceRender`` that turns the record ``poll()`` returned (before any SMT) into bytes. With
``errors.deadletterqueue.context.headers.enable`` the ``__connect.errors.*`` headers say where it
came from and why it failed; a source record's also carry its source partition and offset (JSON).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog

from engine.api.records import SourceRecord
from engine.config.secrets import hide
from engine.converters.base import converted
from engine.converters.json_converter import JsonConverter
from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.log_reporter import class_name
from engine.tolerance.metrics import ErrorMetrics
from engine.topics.base import OwnProducer, Producer, Topics

log = structlog.get_logger(component="errors")

DLQ_PARTITIONS = 1
HEADER_PREFIX = "__connect.errors."
ERROR_HEADER_ORIG_TOPIC = HEADER_PREFIX + "topic"
ERROR_HEADER_ORIG_PARTITION = HEADER_PREFIX + "partition"
ERROR_HEADER_ORIG_OFFSET = HEADER_PREFIX + "offset"
ERROR_HEADER_CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
ERROR_HEADER_TASK_ID = HEADER_PREFIX + "task.id"
ERROR_HEADER_STAGE = HEADER_PREFIX + "stage"
ERROR_HEADER_EXECUTING_CLASS = HEADER_PREFIX + "class.name"
ERROR_HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
ERROR_HEADER_EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
ERROR_HEADER_EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"
# ours, for source records (Connect has no source dead letter queue): where the record came from
ERROR_HEADER_SOURCE_PARTITION = HEADER_PREFIX + "source.partition"
ERROR_HEADER_SOURCE_OFFSET = HEADER_PREFIX + "source.offset"

RawHeaders = Sequence[tuple[str, bytes | None]]
SourceRender = Callable[[SourceRecord], Awaitable[tuple[bytes | None, bytes | None, RawHeaders]]]
"""A source record as bytes for the dead letter queue: key, value, headers (awaited: a converter may
first wait for its schema from a registry)."""


class DeadLetterQueueReporter:
    def __init__(
        self,
        producer: Producer,
        policy: ErrorPolicy,
        connector: str,
        task: int,
        *,
        source_render: SourceRender | None = None,
    ) -> None:
        """``source_render``: a source task's; without one, source contexts are ignored."""
        self.producer = producer
        self.policy = policy
        self.connector = connector
        self.task = task
        self.topic = policy.dlq_topic.strip()
        self.source_render = source_render

    async def report(self, ctx: ProcessingContext, metrics: ErrorMetrics | None = None) -> None:
        """Send the record and wait for the acknowledgement; a refused send is logged, kept on
        ``ctx.dlq_error`` and raised."""
        if not self.topic:
            return
        source = ctx.source_record
        if source is not None and self.source_render is None:
            return
        if metrics is not None:
            metrics.total_dlq_produced += 1
        headers: list[tuple[str, bytes | None]]
        if source is not None:
            assert self.source_render is not None
            key, value, raw_headers = await self.source_render(source)
            headers = list(raw_headers)
        else:
            consumed = ctx.consumed
            if consumed is None:  # a record the task made up: nothing raw to replay (Kafka counts a failure)
                if metrics is not None:
                    metrics.total_dlq_failures += 1
                return
            key, value, headers = consumed.key, consumed.value, list(consumed.headers)
        if self.policy.dlq_context_headers:
            headers += self.context_headers(ctx)
        try:
            await self.producer.send(self.topic, key, value, headers)
        except Exception as exc:
            log.error(
                "task.dlq_produce_failed",
                connector=self.connector,
                task=self.task,
                topic=self.topic,
                error=repr(exc),
            )
            if metrics is not None:
                metrics.total_dlq_failures += 1
            ctx.dlq_error = exc
            raise

    def context_headers(self, ctx: ProcessingContext) -> list[tuple[str, bytes]]:
        """The ``__connect.errors.*`` headers, in Kafka's order, as UTF-8 text."""
        headers: list[tuple[str, str]] = []
        if ctx.consumed is not None:
            headers += [
                (ERROR_HEADER_ORIG_TOPIC, ctx.consumed.topic),
                (ERROR_HEADER_ORIG_PARTITION, str(ctx.consumed.partition)),
                (ERROR_HEADER_ORIG_OFFSET, str(ctx.consumed.offset)),
            ]
        elif (source := ctx.source_record) is not None:  # the topic it was bound for, before any SMT
            headers.append((ERROR_HEADER_ORIG_TOPIC, source.topic))
            if source.kafka_partition is not None:
                headers.append((ERROR_HEADER_ORIG_PARTITION, str(source.kafka_partition)))
        headers += [
            (ERROR_HEADER_CONNECTOR_NAME, self.connector),
            (ERROR_HEADER_TASK_ID, str(self.task)),
            (ERROR_HEADER_STAGE, str(ctx.stage)),
            (ERROR_HEADER_EXECUTING_CLASS, class_name(ctx.executing_class)),
        ]
        error = ctx.error
        if error is not None:
            headers += [
                (ERROR_HEADER_EXCEPTION, class_name(type(error))),
                # never a value a config provider resolved: its reference instead (engine/config/secrets.py)
                (ERROR_HEADER_EXCEPTION_MESSAGE, hide(str(error))),
                (ERROR_HEADER_EXCEPTION_STACK_TRACE, hide("".join(traceback.format_exception(error)))),
            ]
        if (source := ctx.source_record) is not None:
            headers += [
                (ERROR_HEADER_SOURCE_PARTITION, _json(source.source_partition)),
                (ERROR_HEADER_SOURCE_OFFSET, _json(source.source_offset)),
            ]
        return [(key, text.encode("utf-8")) for key, text in headers]


def _json(value: Mapping[str, Any] | None) -> str:
    """Keys sorted, as the offset store writes them; a value JSON cannot hold is written as its text."""
    return json.dumps(
        dict(value) if value is not None else None, sort_keys=True, separators=(",", ":"), default=str
    )


async def open_dead_letter_queue(
    topics: Topics,
    policy: ErrorPolicy,
    reporter: DeadLetterQueueReporter,
    producer_client: Mapping[str, Any] | None,
    admin_client: Mapping[str, Any] | None,
) -> OwnProducer | None:
    """At task start: the topic made if missing; with ``producer.override.*`` a producer of the
    connector's own, returned for the loop to close (else the worker's producer is used)."""
    await ensure_dlq_topic(topics, policy, admin_client)
    if producer_client is None:
        return None
    own = await topics.producer_with(producer_client)
    reporter.producer = own
    return own


async def ensure_dlq_topic(
    topics: Topics, policy: ErrorPolicy, client_config: Mapping[str, Any] | None = None
) -> bool:
    """Create the DLQ topic with one partition and ``errors.deadletterqueue.topic.replication.factor``
    copies if it is missing; True if this call created it."""
    topic = policy.dlq_topic.strip()
    if not topic:
        return False
    created = await topics.create_topic(
        topic, DLQ_PARTITIONS, client_config=client_config, replication_factor=policy.dlq_replication_factor
    )
    if created:
        log.info("task.dlq_topic_created", topic=topic, partitions=DLQ_PARTITIONS)
    return created


async def render_source(
    record: SourceRecord,
    key_converter: Any,
    value_converter: Any,
    headers: Callable[[SourceRecord], RawHeaders],
) -> tuple[bytes | None, bytes | None, RawHeaders]:
    """A source record as its task's converters write it; a part they cannot convert (the stage
    that failed) as JSON with its schema (``JsonConverter``, ``schemas.enable=true``), else null;
    headers the header converter cannot convert are left out.

    A converter still fetching the record's schema from a registry (``ConversionPending``: the record
    failed before its schema was ever needed, in an SMT say) is waited for, as a record that passes
    waits, so the dead letter queue holds the record in the topic's own format; only a fetch that
    fails leaves the part to JSON."""
    return (
        await _convert(key_converter, record.topic, record.key_schema, record.key),
        await _convert(value_converter, record.topic, record.value_schema, record.value),
        await _try_headers(headers, record),
    )


async def _convert(converter: Any, topic: str, schema: Any, value: Any) -> bytes | None:
    try:
        written: bytes | None = await converted(lambda: converter.from_connect_data(topic, schema, value))
        return written
    except Exception:
        pass
    try:
        return JsonConverter().from_connect_data(topic, schema, value)
    except Exception:
        return None


async def _try_headers(headers: Callable[[SourceRecord], RawHeaders], record: SourceRecord) -> RawHeaders:
    try:
        return await converted(lambda: headers(record))
    except Exception:
        return ()
