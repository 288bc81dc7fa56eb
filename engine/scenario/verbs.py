"""The scenario verbs, written once: what each step's arguments become, as one call on a target.

The three runners differ in what they act on, not in what a verb means. A connector verb goes to a
``ConnectorTarget``: an engine's embedding API (``EngineTarget``, over the single worker or over the
cluster's leader, where REST forwarding would send the request) or a worker's REST API (the process
runner's ``RestTarget``). A worker verb of a cluster scenario goes to a ``WorkerFleet``: the
in-process cluster or the worker processes. A runner binds these tables to its targets and keeps only
its settling and its expectations, so a new verb is one row here and one method on each target.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol, TypeVar

from engine.engine import Engine
from engine.testing.faults import FAULTS

Args = Mapping[str, Any]  # a step's checked arguments (``model.Step.args``)
Action = Callable[[Args], Awaitable[None]]  # a verb bound to its target: what a runner calls per step
Target = TypeVar("Target")


class ConnectorTarget(Protocol):
    """What the connector verbs act on, one method per verb."""

    async def create(self, name: str, config: dict[str, str], initial_state: str | None) -> None: ...
    async def update(self, name: str, config: dict[str, str]) -> None: ...
    async def patch(self, name: str, changes: dict[str, str | None]) -> None: ...
    async def pause(self, name: str) -> None: ...
    async def resume(self, name: str) -> None: ...
    async def stop(self, name: str) -> None: ...
    async def restart(self, name: str, include_tasks: bool, only_failed: bool) -> None: ...
    async def restart_task(self, name: str, task: int) -> None: ...
    async def delete(self, name: str) -> None: ...


class WorkerFleet(Protocol):
    """What the worker verbs of a cluster scenario act on: its workers by name (``w1`` .. ``wN``)."""

    async def start_worker(self, name: str) -> None: ...
    async def stop_worker(self, name: str) -> None: ...
    async def kill_worker(self, name: str) -> None: ...
    async def restart_worker(self, name: str) -> None: ...
    async def partition(self, name: str) -> None: ...
    async def heal(self, name: str) -> None: ...
    async def rebalance(self) -> None: ...
    async def advance(self, seconds: float) -> None: ...


class EngineTarget:
    """The connector verbs on an ``Engine``, found again at each step: the worker may be down by
    then, or another worker may lead."""

    def __init__(self, engine: Callable[[], Engine]) -> None:
        self.engine = engine

    async def create(self, name: str, config: dict[str, str], initial_state: str | None) -> None:
        # the runner settles after every step: a start blocked on purpose must not hold the step
        await self.engine().create_connector(name, config, initial_state, wait_started=False)

    async def update(self, name: str, config: dict[str, str]) -> None:
        await self.engine().put_connector_config(name, config, wait_started=False)

    async def patch(self, name: str, changes: dict[str, str | None]) -> None:
        """As ``PATCH /connectors/{name}/config``: a null removes the key."""
        engine = self.engine()
        config = await engine.connector_config(name)
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        await engine.put_connector_config(name, config, wait_started=False)

    async def pause(self, name: str) -> None:
        await self.engine().pause_connector(name)

    async def resume(self, name: str) -> None:
        await self.engine().resume_connector(name)

    async def stop(self, name: str) -> None:
        await self.engine().stop_connector(name)

    async def restart(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        await self.engine().restart_connector(name, include_tasks=include_tasks, only_failed=only_failed)

    async def restart_task(self, name: str, task: int) -> None:
        await self.engine().restart_task(name, task)

    async def delete(self, name: str) -> None:
        await self.engine().delete_connector(name)

    async def append_record(self, key: str, value: Any) -> None:
        """A raw config-log record: text as it is, a mapping as JSON, null a tombstone."""
        await self.engine().append_record(key, value.encode() if isinstance(value, str) else value)


async def _inject(args: Args) -> None:
    if args["action"] == "clear":
        FAULTS.clear(args["connector"], args["callback"])
    else:
        FAULTS.inject(
            args["connector"],
            args["callback"],
            args["action"],
            seconds=args.get("for"),
            task=args.get("task"),
        )


async def _create(target: ConnectorTarget, args: Args) -> None:
    """One connector, or ``count`` of them named ``name`` with ``{n}`` numbered from 0: a burst of
    creates in one step, settled (and rebalanced) once after the last, as a script POSTing them would."""
    count = args.get("count")
    if count is None:
        await target.create(args["name"], args["config"], args.get("initial_state"))
        return
    for n in range(count):
        await target.create(args["name"].replace("{n}", str(n)), args["config"], args.get("initial_state"))


CONNECTOR_VERBS: Final[Mapping[str, Callable[[ConnectorTarget, Args], Awaitable[None]]]] = {
    "create": lambda target, args: _create(target, args),
    "update": lambda target, args: target.update(args["name"], args["config"]),
    "patch": lambda target, args: target.patch(args["name"], args["config"]),
    "pause": lambda target, args: target.pause(args["name"]),
    "resume": lambda target, args: target.resume(args["name"]),
    "stop": lambda target, args: target.stop(args["name"]),
    "restart": lambda target, args: target.restart(
        args["name"], args.get("include_tasks", False), args.get("only_failed", False)
    ),
    "restart_task": lambda target, args: target.restart_task(args["name"], args["task"]),
    "delete": lambda target, args: target.delete(args["name"]),
}

# The verbs that need the engine in this process: a raw record, a fault from the test kit.
IN_PROCESS_VERBS: Final[Mapping[str, Callable[[EngineTarget, Args], Awaitable[None]]]] = {
    "record": lambda target, args: target.append_record(args["key"], args["value"]),
    "inject": lambda target, args: _inject(args),
}

WORKER_VERBS: Final[Mapping[str, Callable[[WorkerFleet, Args], Awaitable[None]]]] = {
    "start_worker": lambda fleet, args: fleet.start_worker(args["worker"]),
    "stop_worker": lambda fleet, args: fleet.stop_worker(args["worker"]),
    "kill_worker": lambda fleet, args: fleet.kill_worker(args["worker"]),
    "restart_worker": lambda fleet, args: fleet.restart_worker(args["worker"]),
    "partition": lambda fleet, args: fleet.partition(args["worker"]),
    "heal": lambda fleet, args: fleet.heal(args["worker"]),
    "rebalance": lambda fleet, args: fleet.rebalance(),
    "advance": lambda fleet, args: fleet.advance(args["by"]),
}


def bind(verbs: Mapping[str, Callable[[Target, Args], Awaitable[None]]], target: Target) -> dict[str, Action]:
    """The verbs of one table, each bound to the runner's target."""
    return {verb: functools.partial(call, target) for verb, call in verbs.items()}
