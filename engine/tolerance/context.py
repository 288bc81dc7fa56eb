"""What one record's trip through the pipeline has seen so far: the originals, where it is, how it failed."""

from __future__ import annotations

from dataclasses import dataclass

from engine.api.records import SinkRecord, SourceRecord
from engine.tolerance.stage import Stage
from engine.topics.base import ConsumedRecord


@dataclass(slots=True)
class ProcessingContext:
    """One per record (Kafka's ``ProcessingContext``); once ``failed``, the loop skips the later stages.

    ``consumed`` is the raw record a sink read (what a dead letter queue receives); ``source_record``
    is what a source task's ``poll`` returned; ``sink_record`` is set when an errant-record report
    could not be matched with the raw record it came from.
    """

    consumed: ConsumedRecord | None = None
    source_record: SourceRecord | None = None
    sink_record: SinkRecord | None = None
    stage: Stage | None = None
    executing_class: type | None = None
    error: BaseException | None = None
    attempt: int = 0
    dlq_error: BaseException | None = None  # the dead letter queue refused the record

    @property
    def failed(self) -> bool:
        return self.error is not None

    def position(self, stage: Stage, executing_class: type | None) -> None:
        """Kafka's ``currentContext(stage, class)``."""
        self.stage = stage
        self.executing_class = executing_class
