"""Instrumented connectors: every callback is recorded, and any can be made to raise or block.

Config keys (all optional):
``test.fail.<callback>=true`` raises ``ConnectException`` from that callback (``task.<callback>``
for the tasks' callbacks, e.g. ``test.fail.task.start``); ``test.block.<callback>.ms=N`` blocks
it (in its worker thread) for N ms; ``test.exit.<callback>=true`` ends the whole process
abruptly (``os._exit``) inside that callback, to test crash recovery (with ``test.exit.once.file=PATH``
only the first time: PATH is created then, and its presence disarms the exit, so a restarted
worker can recover); ``poll`` and ``put`` take ``test.fail.task.poll``/``test.fail.task.put`` and
injected faults but are not recorded (they run all the time); ``test.record.file=PATH`` also appends each call as a JSON
line to PATH, for tests whose engine runs in another process; ``test.task.count=N`` makes
``task_configs`` return N configs whatever ``tasks.max`` says; ``test.poll.idle.ms=N`` makes the
source task's ``poll()`` sleep N ms and return nothing, as an idle FileStream source does (Connect's
waits 1 s), instead of parking until it is stopped: a source that keeps its loop turning, for
measuring what idle connectors cost.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from engine.api import (
    Config,
    ConnectException,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)
from engine.testing.faults import FAULTS


@dataclass(frozen=True, slots=True)
class Call:
    """One callback invocation: which connector, which unit (``connector`` or ``task-N``), what."""

    connector: str
    unit: str
    method: str
    args: dict[str, Any] = field(default_factory=dict)
    worker: str = ""  # the worker id of the cluster member that made the call ("" outside a cluster)


def _worker_pid() -> int:
    """The worker process a call belongs to: in a task host (``python -m engine.worker.task_host``) its
    parent, the worker, whose death (``kill -9`` of its process group) is the host's too."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name in ("engine.worker.task_host", "engine.worker.task_host.__main__"):
        return os.getppid()
    return os.getpid()


class CallLog:
    """Thread-safe record of calls, shared by every instrumented instance in the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[Call] = []

    def add(self, call: Call, record_file: str | None = None) -> None:
        with self._lock:
            self._calls.append(call)
        if record_file:
            with open(record_file, "a", encoding="utf-8") as f:
                f.write(
                    json.dumps(
                        {
                            "connector": call.connector,
                            "unit": call.unit,
                            "method": call.method,
                            "args": call.args,
                            "pid": _worker_pid(),
                            "process": os.getpid(),  # the task host's, for a task in one
                            "worker": call.worker,
                            "at": time.time(),
                        }
                    )
                    + "\n"
                )

    def of(self, connector: str, unit: str | None = None) -> list[Call]:
        with self._lock:
            return [c for c in self._calls if c.connector == connector and (unit is None or c.unit == unit)]

    def all(self) -> list[Call]:
        """Every call so far, in the order they were made (across workers and threads)."""
        with self._lock:
            return list(self._calls)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    def methods(self, connector: str, unit: str | None = None) -> list[str]:
        """Method names in call order, e.g. ``["initialize", "start", "stop", "deleted"]``."""
        return [c.method for c in self.of(connector, unit)]

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()


CALLS = CallLog()


def _hit(
    connector: str,
    unit: str,
    config: Mapping[str, str],
    method: str,
    prefix: str,
    args: dict[str, Any],
    *,
    record: bool = True,
) -> None:
    """Record the call, then apply any injected fault and the config-driven behaviours."""
    if record:
        # a cluster member's engine binds its worker id; callbacks run in a copy of that context
        worker = str(structlog.contextvars.get_contextvars().get("worker", ""))
        CALLS.add(Call(connector, unit, method, args, worker), config.get("test.record.file"))
    FAULTS.hit(connector, unit, prefix + method)
    block = config.get(f"test.block.{prefix}{method}.ms")
    if block:
        time.sleep(int(block) / 1000)
    if config.get(f"test.exit.{prefix}{method}", "false").lower() == "true" and _arm_exit(config):
        os._exit(9)
    if config.get(f"test.fail.{prefix}{method}", "false").lower() == "true":
        raise ConnectException(f"injected failure in {unit}.{method}")


def _arm_exit(config: Mapping[str, str]) -> bool:
    once = config.get("test.exit.once.file")
    if not once:
        return True
    try:
        with open(once, "x", encoding="utf-8"):
            return True
    except FileExistsError:
        return False


class _Instrumented:
    _config: Mapping[str, str]
    _connector: str
    _unit: str

    def _hit(self, method: str, prefix: str = "", **args: Any) -> None:
        _hit(self._connector, self._unit, self._config, method, prefix, args)


class _RecordingConnector(_Instrumented):
    task_type: type[Task]

    def __init__(self) -> None:
        self._config: Mapping[str, str] = {}
        self._connector = "?"
        self._unit = "connector"

    def initialize(self, context: Any) -> None:
        self.context = context
        self._config = context.configs()
        self._connector = self._config.get("name", "?")
        self._hit("initialize")

    def start(self, props: dict[str, str]) -> None:
        self._config = props
        self._hit("start")

    def stop(self) -> None:
        self._hit("stop")

    def task_class(self) -> type[Task]:
        return self.task_type

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        self._hit("task_configs", max_tasks=max_tasks)
        count = int(self._config.get("test.task.count", max_tasks))
        shared = {k: v for k, v in self._config.items() if k.startswith("test.")}
        return [{**shared, "connector.name": self._connector, "task.index": str(n)} for n in range(count)]

    def deleted(self) -> None:
        self._hit("deleted")

    def validate(self, connector_configs: Mapping[str, str]) -> Config:
        # Faults and blocks apply (keyed by the config's name: the validating instance is shared and
        # never started), but validation is not part of the connector's lifecycle, so not recorded.
        _hit(
            connector_configs.get("name", "?"),
            "connector",
            connector_configs,
            "validate",
            "",
            {},
            record=False,
        )
        connector: Any = super()  # a mixin: the Connector base comes later in the concrete classes' MRO
        return cast(Config, connector.validate(connector_configs))

    def version(self) -> str:
        return "1.0-test"


class _RecordingTask(_Instrumented):
    def __init__(self) -> None:
        self._config: Mapping[str, str] = {}
        self._connector = "?"
        self._unit = "task-?"

    def initialize(self, context: Any) -> None:
        self.context = context
        self._config = context.configs()
        self._connector = self._config.get("connector.name", "?")
        self._unit = f"task-{self._config.get('task.index', '?')}"
        self._hit("initialize", "task.")

    def start(self, props: dict[str, str]) -> None:
        self._hit("start", "task.")

    def stop(self, connector_deleted: bool = False) -> None:
        self._hit("stop", "task.", connector_deleted=connector_deleted)

    def version(self) -> str:
        return "1.0-test"

    async def _data_hit(self, method: str) -> None:
        """Faults for the data callbacks (``test.fail.task.poll``, an injected ``task.put``), unrecorded:
        they run for as long as the task does. Checked in a thread only when one is set."""
        if (
            self._config.get(f"test.fail.task.{method}", "false").lower() == "true"
            or self._config.get(f"test.block.task.{method}.ms")
            or FAULTS.armed(self._connector, f"task.{method}")
        ):
            await asyncio.to_thread(
                _hit, self._connector, self._unit, self._config, method, "task.", {}, record=False
            )


class RecordingSourceTask(_RecordingTask, SourceTask):
    async def poll(self) -> list[SourceRecord] | None:
        """Nothing to send: parks until the task is paused or stopped (which cancels it), or with
        ``test.poll.idle.ms`` sleeps that long and returns nothing, as an idle source polls."""
        await self._data_hit("poll")
        idle = self._config.get("test.poll.idle.ms")
        if idle:
            await asyncio.sleep(int(idle) / 1000)
        else:
            await asyncio.get_running_loop().create_future()
        return None


class RecordingSinkTask(_RecordingTask, SinkTask):
    received: list[SinkRecord]

    async def put(self, records: Collection[SinkRecord]) -> None:
        """Keeps what it is given in ``received`` (this instance's), after any fault."""
        await self._data_hit("put")
        if not hasattr(self, "received"):
            self.received = []
        self.received.extend(records)


class RecordingSourceConnector(_RecordingConnector, SourceConnector):
    task_type = RecordingSourceTask


class RecordingSinkConnector(_RecordingConnector, SinkConnector):
    task_type = RecordingSinkTask


def instrumented(connector: type[Any], module: str | None = None) -> type[Any]:
    """A subclass of your connector whose lifecycle callbacks, and its tasks', are recorded in
    ``CALLS`` (and obey injected ``FAULTS``) before your code runs: what scenario ``calls``
    expectations and the cluster invariants read.

    Workers load classes by name, so assign it at module level to the name it returns,
    ``Recorded<YourClass>``: ``RecordedOrdersConnector = instrumented(OrdersConnector)``, then
    ``connector.class: my_tests.RecordedOrdersConnector``; its task class is the nested
    ``RecordedOrdersConnector.Task``. ``module`` defaults to the caller's. Task configs gain
    ``connector.name`` and ``task.index`` (how a task knows whose it is).
    """
    home = module or str(sys._getframe(1).f_globals.get("__name__", "__main__"))  # as namedtuple does
    task_base: type[Any] = connector().task_class()

    class RecordedTask(task_base):  # type: ignore[misc]
        def initialize(self, context: Any) -> Any:
            config = context.configs()
            self._recorded = (
                config.get("connector.name", "?"),
                f"task-{config.get('task.index', '?')}",
                config,
            )
            self._record("initialize")
            base = getattr(super(), "initialize", None)
            return base(context) if base is not None else None

        def start(self, props: dict[str, str]) -> Any:
            self._record("start")
            return super().start(props)

        def stop(self, connector_deleted: bool = False) -> Any:
            self._record("stop", connector_deleted=connector_deleted)
            if accepts_deleted:
                return super().stop(connector_deleted=connector_deleted)
            return super().stop()

        def _record(self, method: str, **args: Any) -> None:
            name, unit, config = getattr(self, "_recorded", ("?", "task-?", {}))
            _hit(name, unit, config, method, "task.", args)

    accepts_deleted = "connector_deleted" in inspect.signature(task_base.stop).parameters

    class Recorded(connector):  # type: ignore[misc]
        def initialize(self, context: Any) -> Any:
            config = context.configs()
            self._recorded = (config.get("name", "?"), config)
            self._record("initialize")
            base = getattr(super(), "initialize", None)
            return base(context) if base is not None else None

        def start(self, props: dict[str, str]) -> Any:
            self._recorded = (
                props.get("name", self._recorded[0] if hasattr(self, "_recorded") else "?"),
                props,
            )
            self._record("start")
            return super().start(props)

        def stop(self) -> Any:
            self._record("stop")
            return super().stop()

        def task_class(self) -> type[Task]:
            return RecordedTask

        def task_configs(self, max_tasks: int) -> Any:
            self._record("task_configs", max_tasks=max_tasks)
            name = self._recorded[0]
            configs = super().task_configs(max_tasks)

            def tagged(result: list[dict[str, str]]) -> list[dict[str, str]]:
                return [{**c, "connector.name": name, "task.index": str(n)} for n, c in enumerate(result)]

            if inspect.isawaitable(configs):

                async def later() -> list[dict[str, str]]:
                    return tagged(await configs)

                return later()
            return tagged(configs)

        def deleted(self) -> Any:
            self._record("deleted")
            return super().deleted()

        def _record(self, method: str, **args: Any) -> None:
            name, config = getattr(self, "_recorded", ("?", {}))
            _hit(name, "connector", config, method, "", args)

    Recorded.__name__ = Recorded.__qualname__ = f"Recorded{connector.__name__}"
    RecordedTask.__name__ = "Task"
    RecordedTask.__qualname__ = f"{Recorded.__qualname__}.Task"
    Recorded.__module__ = RecordedTask.__module__ = home
    Recorded.Task = RecordedTask
    return Recorded
