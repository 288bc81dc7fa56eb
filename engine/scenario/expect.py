"""The ``expect`` verb: what a connector should look like once the engine has settled."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine.engine import Engine
from engine.errors import ConnectorNotFound, short_message
from engine.testing.recording import CALLS, Call

DEFAULT_TIMEOUT_S = 10.0
_POLL_S = 0.01


class ExpectationFailed(AssertionError):
    """An ``expect`` step did not hold; the message says what was seen instead."""


def render_call(call: Call) -> str:
    """``stop(connector_deleted=true)``; a call without arguments is just its name."""
    if not call.args:
        return call.method
    args = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(call.args.items()))
    return f"{call.method}({args})"


def calls_match(expected: list[str], seen: list[Call]) -> bool:
    """A bare name matches the callback whatever its arguments; with arguments they must match."""
    if len(expected) != len(seen):
        return False
    return all(
        want == (render_call(call) if "(" in want else call.method)
        for want, call in zip(expected, seen, strict=True)
    )


async def _observe(engine: Engine, name: str, wanted: dict[str, Any]) -> dict[str, Any]:
    """Everything an expectation can look at, as plain data (also what a failure message shows)."""
    seen: dict[str, Any] = {"exists": name in await engine.connectors()}
    try:
        status = await engine.connector_status(name)
    except ConnectorNotFound:
        status = None
    seen["state"] = None if status is None else status["connector"]["state"]
    seen["tasks"] = [] if status is None else [t["state"] for t in status["tasks"]]
    # restart.policy=on-failure: the status fields (absent, i.e. 0 and nothing scheduled, without the policy)
    units = [] if status is None else [status["connector"], *status["tasks"]]
    seen["restart_attempts"] = 0 if status is None else status["connector"].get("restart_attempts", 0)
    seen["task_restart_attempts"] = (
        [] if status is None else [t.get("restart_attempts", 0) for t in status["tasks"]]
    )
    seen["restart_scheduled"] = any(u.get("next_restart_ms") is not None for u in units)
    seen["task_count"] = len(await engine.task_configs(name)) if seen["exists"] else 0
    # only when asked: a sink's offsets are a broker round trip (and one some test brokers fumble)
    seen["offsets"] = (
        (await engine.connector_offsets(name))["offsets"] if seen["exists"] and "offsets" in wanted else []
    )
    seen["cleanup"] = next((c for c in engine.connector_cleanups() if c["connector"] == name), None)
    seen["incarnation"] = engine.herder.snapshot.incarnations.get(name)
    return seen


def _mismatches(args: dict[str, Any], seen: dict[str, Any], name: str) -> list[str]:
    wrong = []
    absent = not seen["exists"] and seen["state"] is None
    if "absent" in args and args["absent"] != absent:
        wrong.append(f"absent is {str(absent).lower()}, expected {str(args['absent']).lower()}")
    if "state" in args:
        state = "DESTROYED" if absent else seen["state"]
        if state != args["state"]:
            wrong.append(f"state is {state}, expected {args['state']}")
    if "tasks" in args and seen["tasks"] != args["tasks"]:
        wrong.append(f"task states are {seen['tasks']}, expected {args['tasks']}")
    if "task_count" in args and seen["task_count"] != args["task_count"]:
        wrong.append(f"task count is {seen['task_count']}, expected {args['task_count']}")
    if "offsets" in args:
        key = lambda o: json.dumps(o, sort_keys=True)  # noqa: E731 - a sort key, named for reading
        if sorted(map(key, seen["offsets"])) != sorted(map(key, args["offsets"])):
            wrong.append(f"offsets are {seen['offsets']}, expected {args['offsets']}")
    if "calls" in args:
        calls = CALLS.of(name, "connector")
        if not calls_match(args["calls"], calls):
            wrong.append(f"connector calls were {[render_call(c) for c in calls]}, expected {args['calls']}")
    for task, expected in args.get("task_calls", {}).items():
        calls = CALLS.of(name, f"task-{task}")
        if not calls_match(expected, calls):
            wrong.append(f"task-{task} calls were {[render_call(c) for c in calls]}, expected {expected}")
    if "cleanup" in args:
        want, got = args["cleanup"], seen["cleanup"]
        if (want is None) != (got is None) or (want and any(got[k] != v for k, v in want.items())):
            wrong.append(f"cleanup is {got}, expected {want}")
    wrong.extend(
        f"{key} is {json.dumps(seen[key])}, expected {json.dumps(args[key])}"
        for key in ("restart_attempts", "task_restart_attempts", "restart_scheduled")
        if key in args and seen[key] != args[key]
    )
    if "incarnation" in args and seen["incarnation"] != args["incarnation"]:
        wrong.append(f"incarnation is {seen['incarnation']}, expected {args['incarnation']}")
    return wrong


async def check_connector(engine: Engine | None, args: dict[str, Any]) -> None:
    """Poll until every check holds or the step's timeout passes (the engine has settled already,
    so this waits only for what settles on its own clock, such as a status written from a thread)."""
    name = args["connector"]
    if engine is None:
        if set(args) - {"connector", "timeout", "calls", "task_calls"}:
            raise ExpectationFailed(
                "the worker is down (crashed and not restarted): only calls can be checked"
            )
        seen: dict[str, Any] = {"exists": False, "state": None}
        wrong = _mismatches(args, seen, name)
        if wrong:
            raise ExpectationFailed(f"connector {name}: " + "; ".join(wrong))
        return
    deadline = asyncio.get_running_loop().time() + args.get("timeout", DEFAULT_TIMEOUT_S)
    while True:
        wrong = _mismatches(args, await _observe(engine, name, args), name)
        if not wrong:
            return
        if asyncio.get_running_loop().time() >= deadline:
            raise ExpectationFailed(f"connector {name}: " + "; ".join(wrong))
        await asyncio.sleep(_POLL_S)


def check_error(args: dict[str, Any], error: BaseException | None, previous: str) -> None:
    """``error`` names the class (or any base class) the previous step raised."""
    if error is None:
        raise ExpectationFailed(f"{previous} raised nothing, expected {args['error']}")
    names = [cls.__name__ for cls in type(error).__mro__]
    if args["error"] not in names:
        raise ExpectationFailed(
            f"{previous} raised {type(error).__name__}: {short_message(error)}, expected {args['error']}"
        )
    if "message" in args and str(args["message"]) not in str(error):
        raise ExpectationFailed(
            f"{previous} raised {type(error).__name__}: {short_message(error)}, "
            f"expected a message containing {args['message']!r}"
        )


def cluster_cleanup(listings: list[list[dict[str, Any]]], connector: str) -> dict[str, Any] | None:
    """One connector's unfinished cleanup across the workers' listings: its owner's entry, else PENDING."""
    entries = [entry for listing in listings for entry in listing if entry["connector"] == connector]
    return next((e for e in entries if e["state"] != "PENDING"), entries[0] if entries else None)
