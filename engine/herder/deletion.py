"""Running ``Connector.deleted()``: bounded, never raising, on a fresh instance when needed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

import structlog

from engine.api._invoke import invoke
from engine.api.connector import Connector, SinkConnector
from engine.api.context import ConnectorContext, SinkConnectorContext, SourceConnectorContext
from engine.errors import trace_of
from engine.storage.base import OffsetStore

log = structlog.get_logger(component="herder")


@dataclass(frozen=True, slots=True)
class DeletionOutcome:
    """What deleting a connector came to; ``error`` holds the trace when ``deleted()`` failed.

    ``deferred`` (distributed mode): the deletion is written, and ``deleted()`` runs on the
    worker that owns the connector when it reads the tombstone; ``succeeded`` is then unknown
    (False) here.
    """

    connector: str
    succeeded: bool
    error: str | None = None
    fresh_instance: bool = False
    seconds: float = 0.0
    deferred: bool = False

    def with_duration(self, seconds: float) -> DeletionOutcome:
        return replace(self, seconds=seconds)


def _closed_context(cls: type[Connector], config: dict[str, str], offsets: OffsetStore,
                    name: str) -> ConnectorContext:
    def refuse() -> None:
        raise RuntimeError("the connector is being deleted")

    def refuse_error(exc: BaseException) -> None:
        raise RuntimeError("the connector is being deleted") from exc

    if issubclass(cls, SinkConnector):
        return SinkConnectorContext(config, request_reconfiguration=refuse, raise_error=refuse_error)
    return SourceConnectorContext(config, offset_reader=offsets.reader(name),
                                  request_reconfiguration=refuse, raise_error=refuse_error)


async def run_deleted(
    name: str,
    cls: type[Connector] | None,
    config: dict[str, str],
    instance: Connector | None,
    offsets: OffsetStore,
    *,
    timeout: float,
) -> DeletionOutcome:
    """Call ``deleted()`` on ``instance``, or on a fresh one (``initialize`` first) if it has none.

    A connector that never started, failed, or was abandoned still gets its cleanup: its
    context's ``configs()`` tells it what it had been configured to provision.
    """
    fresh = instance is None
    if instance is None and cls is None:
        error = f"connector class {config.get('connector.class')!r} cannot be loaded"
        log.error("connector.deletion_failed", reason=error, fresh_instance=fresh)
        return DeletionOutcome(name, False, error, fresh)
    try:
        async with asyncio.timeout(timeout):
            if instance is None:
                assert cls is not None
                instance = cls()
                await invoke(instance.initialize, _closed_context(cls, config, offsets, name))
            await invoke(instance.deleted)
    except TimeoutError:
        error = f"Connector.deleted() did not return within {timeout:g} s"
        log.error("connector.deletion_failed", reason=error, fresh_instance=fresh)
        return DeletionOutcome(name, False, error, fresh)
    except Exception as exc:  # user code: reported, deletion still completes
        error = trace_of(exc)
        log.error("connector.deletion_failed", reason=str(exc), trace=error, fresh_instance=fresh)
        return DeletionOutcome(name, False, error, fresh)
    log.info("connector.deleted_ran", fresh_instance=fresh)
    return DeletionOutcome(name, True, None, fresh)
