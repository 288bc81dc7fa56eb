"""Runs one connector instance through its target states (Connect's ``WorkerConnector``)."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

import structlog

from engine.api._invoke import invoke
from engine.api.connector import Connector
from engine.api.context import ConnectorContext
from engine.api.metrics import PluginMetrics, PluginMetricsRegistry, attach
from engine.config.masking import connector_password_keys, mask_config
from engine.worker.report import ReportSink
from engine.worker.runner import Runner
from states import TargetState

log = structlog.get_logger(component="worker")


class InstanceState(Enum):
    INIT = "INIT"
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"


class ConnectorRunner(Runner):
    """Owns one ``Connector`` object: ``initialize`` once, then one target state at a time.

    Pending target changes coalesce (the newest wins). A FAILED instance moves only to STOPPED.
    ``stop()`` is called only on a STARTED instance, as in Connect.
    """

    def __init__(
        self,
        connector: str,
        cls: type[Connector],
        config: dict[str, str],
        target: TargetState,
        make_context: Callable[[ConnectorRunner], ConnectorContext],
        report: ReportSink,
        *,
        raw_config: dict[str, str] | None = None,
        plugin_metrics: PluginMetricsRegistry | None = None,
    ) -> None:
        """``config`` is what the connector gets (references resolved); ``raw_config`` is what is logged."""
        super().__init__(f"connector:{connector}", report)
        self.connector = connector
        self.cls = cls
        self.config = config
        self._raw_config = config if raw_config is None else raw_config
        self.instance: Connector | None = None
        self.initialized = False
        self.state = InstanceState.INIT
        self._pending: TargetState | None = target
        self._context = make_context(self)
        self._plugin_metrics = plugin_metrics
        self._metrics_handle: PluginMetrics | None = None  # KIP-877: closed with the instance

    def transition_to(self, target: TargetState) -> None:
        self._pending = target
        self.wake()

    def fail(self, exc: BaseException) -> None:
        """``raise_error`` and tasks.max violations: FAILED without stopping the instance."""
        self.state = InstanceState.FAILED
        self.report("fail", exc)

    async def _body(self) -> None:
        try:
            if await self._initialize():
                while not self.stopping():
                    target, self._pending = self._pending, None
                    if target is not None:
                        await self._apply(target)
                    elif not self.stopping():
                        await self._wait()
            else:
                while not self.stopping():
                    await self._wait()
            await self._stop_instance()
        finally:
            self._context.close()
            if self._metrics_handle is not None:
                self._metrics_handle.close()

    async def _initialize(self) -> bool:
        try:
            self.instance = self.cls()
            await invoke(self.instance.version)
            self._metrics_handle = attach(self.instance, self._plugin_metrics, {"connector": self.connector})
            await invoke(self.instance.initialize, self._context)
        except Exception as exc:  # user code: any failure makes the connector FAILED
            # ERROR, as Connect logs it: alerts on error lines must see the commonest failure
            log.error("connector.initialize_failed", connector=self.connector, error=repr(exc))
            self.state = InstanceState.FAILED
            self.report("fail", exc)
            return False
        self.initialized = True
        log.info(
            "connector.config",
            connector=self.connector,
            config=mask_config(self._raw_config, await connector_password_keys(self.instance)),
        )
        return True

    async def _apply(self, target: TargetState) -> None:
        if self.state is InstanceState.FAILED and target is not TargetState.STOPPED:
            log.info(
                "connector.transition_ignored",
                connector=self.connector,
                target=target.value,
                reason=f"Cannot transition connector to {target.value} since it has failed",
            )
            return
        if target is TargetState.STARTED:
            await self._start()
        else:
            await self._suspend(
                InstanceState.PAUSED if target is TargetState.PAUSED else InstanceState.STOPPED
            )

    async def _start(self) -> None:
        if self.state is InstanceState.STARTED:
            return
        trigger = "start" if self.state is InstanceState.INIT else "resume"
        assert self.instance is not None
        try:
            await invoke(self.instance.start, dict(self.config))
        except Exception as exc:  # user code
            log.error("connector.start_failed", connector=self.connector, error=repr(exc))
            self.state = InstanceState.FAILED
            self.report("fail", exc)
            return
        self.state = InstanceState.STARTED
        self.report(trigger)

    async def _suspend(self, to: InstanceState) -> None:
        if self.state is to:
            return
        trigger = "pause" if to is InstanceState.PAUSED else "stop"
        if self.state is InstanceState.STARTED:
            assert self.instance is not None
            try:
                await invoke(self.instance.stop)
            except Exception as exc:  # user code: pausing fails the connector; stopping still stops
                if to is InstanceState.PAUSED:
                    self.state = InstanceState.FAILED
                    self.report("fail", exc)
                    return
                log.warning("connector.stop_failed", connector=self.connector, error=repr(exc))
        self.state = to
        self.report(trigger)

    async def _stop_instance(self) -> None:
        if self.state is not InstanceState.STARTED or self.instance is None:
            return
        try:
            await invoke(self.instance.stop)
        except Exception as exc:  # user code: logged; the shutdown continues
            log.warning("connector.stop_failed", connector=self.connector, error=repr(exc))
        self.state = InstanceState.STOPPED
