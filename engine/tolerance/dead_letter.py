"""``errors.deadletterqueue.*``: sink records that failed go, raw, to a topic (Kafka's ``DeadLetterQueueReporter``).

Only sinks have one: what failed is the raw record the consumer read (key, value and headers as
bytes, untouched by converters or SMTs), so it can be replayed. A source record has no raw form
yet, so source contexts are ignored. With ``errors.deadletterqueue.context.headers.enable`` the
``__connect.errors.*`` headers say where it came from and why it failed.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

import structlog

from engine.tolerance.config import ErrorPolicy
from engine.tolerance.context import ProcessingContext
from engine.tolerance.log_reporter import class_name
from engine.tolerance.metrics import ErrorMetrics
from engine.topics.base import Producer, Topics

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


class DeadLetterQueueReporter:
    def __init__(self, producer: Producer, policy: ErrorPolicy, connector: str, task: int) -> None:
        self.producer = producer
        self.policy = policy
        self.connector = connector
        self.task = task
        self.topic = policy.dlq_topic.strip()

    async def report(self, ctx: ProcessingContext, metrics: ErrorMetrics | None = None) -> None:
        """Send the raw record and wait for the acknowledgement; a refused send is logged and raised."""
        if not self.topic or ctx.source_record is not None:
            return
        if metrics is not None:
            metrics.total_dlq_produced += 1
        consumed = ctx.consumed
        if consumed is None:  # a record the task made up: nothing raw to replay (Kafka counts a failure)
            if metrics is not None:
                metrics.total_dlq_failures += 1
            return
        headers = list(consumed.headers)
        if self.policy.dlq_context_headers:
            headers += self.context_headers(ctx)
        try:
            await self.producer.send(self.topic, consumed.key, consumed.value, headers)
        except Exception as exc:
            log.error("task.dlq_produce_failed", connector=self.connector, task=self.task, topic=self.topic,
                      error=repr(exc))
            if metrics is not None:
                metrics.total_dlq_failures += 1
            raise

    def context_headers(self, ctx: ProcessingContext) -> list[tuple[str, bytes]]:
        """The ``__connect.errors.*`` headers, in Kafka's order, as UTF-8 text."""
        headers: list[tuple[str, str]] = []
        if ctx.consumed is not None:
            headers += [(ERROR_HEADER_ORIG_TOPIC, ctx.consumed.topic),
                        (ERROR_HEADER_ORIG_PARTITION, str(ctx.consumed.partition)),
                        (ERROR_HEADER_ORIG_OFFSET, str(ctx.consumed.offset))]
        headers += [(ERROR_HEADER_CONNECTOR_NAME, self.connector),
                    (ERROR_HEADER_TASK_ID, str(self.task)),
                    (ERROR_HEADER_STAGE, str(ctx.stage)),
                    (ERROR_HEADER_EXECUTING_CLASS, class_name(ctx.executing_class))]
        error = ctx.error
        if error is not None:
            headers += [(ERROR_HEADER_EXCEPTION, class_name(type(error))),
                        (ERROR_HEADER_EXCEPTION_MESSAGE, str(error)),
                        (ERROR_HEADER_EXCEPTION_STACK_TRACE, "".join(traceback.format_exception(error)))]
        return [(key, text.encode("utf-8")) for key, text in headers]


async def ensure_dlq_topic(topics: Topics, policy: ErrorPolicy, client_config: Mapping[str, Any] | None = None) -> bool:
    """Create the DLQ topic with one partition and ``errors.deadletterqueue.topic.replication.factor``
    copies if it is missing; True if this call created it."""
    topic = policy.dlq_topic.strip()
    if not topic:
        return False
    created = await topics.create_topic(topic, DLQ_PARTITIONS, client_config=client_config,
                                        replication_factor=policy.dlq_replication_factor)
    if created:
        log.info("task.dlq_topic_created", topic=topic, partitions=DLQ_PARTITIONS)
    return created
