"""Scenario files: parsed and checked up front, so a typo fails before any connector starts."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.errors import EngineError
from engine.testing.faults import FaultAction

CONNECTOR_STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING", "DESTROYED")
TASK_STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "FAILED", "RESTARTING", "DESTROYED")
INITIAL_STATES = ("RUNNING", "PAUSED", "STOPPED")
INJECT_ACTIONS = (*(a.value for a in FaultAction), "clear")


class ScenarioError(EngineError, ValueError):
    """A scenario file is malformed; the message names the file, the step and the key."""

    def __init__(
        self,
        path: str,
        message: str,
        *,
        step: int | None = None,
        verb: str | None = None,
        key: str | None = None,
    ) -> None:
        where = path if step is None else f"{path}: step {step}" + (f" ({verb})" if verb else "")
        if key is not None:
            where += f", key '{key}'"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.step = step
        self.verb = verb
        self.key = key


@dataclass(frozen=True, slots=True)
class Step:
    index: int  # 1-based, as people count the steps of a file
    verb: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    path: str
    steps: tuple[Step, ...]
    worker: dict[str, str] = field(default_factory=dict)
    workers: int | None = None  # a cluster of this many workers (w1..wN), run by the cluster runner
    seed: int | None = None  # the cluster runner's scheduler seed (``--seed`` overrides it)

    @property
    def cluster(self) -> bool:
        return self.workers is not None


# ---- values -------------------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: object) -> float:
    """``5s``, ``250ms``, ``2m`` or a number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return float(value)
    match = _DURATION.match(str(value))
    if match is None:
        raise ValueError(f"not a duration (use e.g. 5s, 250ms, 2m): {value!r}")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, dict | list):
        raise ValueError(f"expected a scalar, got {value!r}")
    return str(value)


def _config(value: object, *, nulls: bool = False) -> dict[str, str | None]:
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of config keys to values, got {value!r}")
    return {str(k): None if v is None and nulls else _text(v) for k, v in value.items()}


def _name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a connector name, got {value!r}")
    return value


def _positive(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a whole number of at least 1, got {value!r}")
    return value


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a non-negative integer, got {value!r}")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[object], str]:
    def check(value: object) -> str:
        text = str(value).upper() if choices[0].isupper() else str(value)
        if text not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return text

    return check


def _states(choices: tuple[str, ...]) -> Callable[[object], list[str]]:
    one = _one_of(choices)

    def check(value: object) -> list[str]:
        if not isinstance(value, list):
            raise ValueError(f"expected a list of task states, got {value!r}")
        return [one(v) for v in value]

    return check


def _calls(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of callback names, got {value!r}")
    return list(value)


def _task_calls(value: object) -> dict[int, list[str]]:
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of task number to callback names, got {value!r}")
    return {_int(k): _calls(v) for k, v in value.items()}


def _offsets(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(
        isinstance(v, Mapping) and set(v) == {"partition", "offset"} for v in value
    ):
        raise ValueError(f"expected a list of {{partition: ..., offset: ...}}, got {value!r}")
    return [dict(v) for v in value]


def _record_value(value: object) -> object:
    if value is not None and not isinstance(value, str | Mapping):
        raise ValueError(f"expected a JSON object, raw text or null, got {value!r}")
    return value


CLEANUP_STATES = ("RUNNING", "LINGERING", "WAITING", "GAVE_UP", "PENDING")


def _cleanup(value: object) -> dict[str, Any] | None:
    """``null`` (no unfinished cleanup) or ``{state: WAITING, attempts: 1}`` (either key optional)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not set(value) <= {"state", "attempts"}:
        raise ValueError(f"expected null or {{state: ..., attempts: ...}}, got {value!r}")
    checked: dict[str, Any] = {}
    if "state" in value:
        checked["state"] = _one_of(CLEANUP_STATES)(value["state"])
    if "attempts" in value:
        checked["attempts"] = _int(value["attempts"])
    return checked


def _ints(value: object) -> list[int]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list of non-negative integers, got {value!r}")
    return [_int(v) for v in value]


def _anything(value: object) -> object:
    return value


def _error_name(value: object) -> str:
    if not isinstance(value, str) or not value.isidentifier():
        raise ValueError(f"expected an error class name such as ConnectorNotFound, got {value!r}")
    return value


# ---- verbs --------------------------------------------------------------------------------

Checker = Callable[[object], object]


@dataclass(frozen=True, slots=True)
class Verb:
    required: Mapping[str, Checker]
    optional: Mapping[str, Checker] = field(default_factory=dict)
    shorthand: str | None = None  # `pause: c` means `pause: {name: c}`
    empty: bool = False  # `crash:` takes no arguments


_NAME: dict[str, Checker] = {"name": _name}
VERBS: dict[str, Verb] = {
    "create": Verb(
        {**_NAME, "config": _config}, {"initial_state": _one_of(INITIAL_STATES), "count": _positive}
    ),
    "update": Verb({**_NAME, "config": _config}),
    "patch": Verb({**_NAME, "config": lambda v: _config(v, nulls=True)}),
    "pause": Verb(_NAME, shorthand="name"),
    "resume": Verb(_NAME, shorthand="name"),
    "stop": Verb(_NAME, shorthand="name"),
    "restart": Verb(_NAME, {"include_tasks": _bool, "only_failed": _bool}, shorthand="name"),
    "restart_task": Verb({**_NAME, "task": _int}),
    "delete": Verb(_NAME, shorthand="name"),
    "record": Verb({"key": lambda v: _text(v), "value": _record_value}),
    "inject": Verb(
        {"connector": _name, "callback": lambda v: _text(v), "action": _one_of(INJECT_ACTIONS)},
        {"for": parse_duration, "task": _int},
    ),
    "crash": Verb({}, empty=True),
    "restart_worker": Verb({}, empty=True),
    "advance": Verb({"by": parse_duration}, shorthand="by"),
    "expect": Verb(
        {},
        {
            "connector": _name,
            "state": _one_of(CONNECTOR_STATES),
            "tasks": _states(TASK_STATES),
            "task_count": _int,
            "absent": _bool,
            "calls": _calls,
            "task_calls": _task_calls,
            "offsets": _offsets,
            "error": _error_name,
            "message": _anything,
            "timeout": parse_duration,
            "cleanup": _cleanup,
            "incarnation": lambda v: _text(v),
            "restart_attempts": _int,
            "task_restart_attempts": _ints,
            "restart_scheduled": _bool,
        },
    ),
}


_WORKER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _worker(value: object) -> str:
    if not isinstance(value, str) or not _WORKER_NAME.match(value):
        raise ValueError(f"expected a worker name such as w1, got {value!r}")
    return value


def _unit(value: object) -> str:
    """``orders`` (the connector) or ``orders-0`` (its task 0), as Connect names a task id."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a connector name or a task id such as orders-0, got {value!r}")
    return value


def _assigned(value: object) -> dict[str, list[str]]:
    if not isinstance(value, Mapping):
        raise ValueError(
            f"expected a mapping of worker to the units it runs, e.g. {{w1: [c, c-0]}}, got {value!r}"
        )
    checked: dict[str, list[str]] = {}
    for worker, units in value.items():
        if not isinstance(units, list):
            raise ValueError(f"expected a list of connectors and task ids for {worker}, got {units!r}")
        checked[_worker(worker)] = [_unit(u) for u in units]
    return checked


def _workers_of(value: object) -> dict[str, Any]:
    """``{connector: w1, tasks: [w1, w2]}``: which worker each unit's status names."""
    if not isinstance(value, Mapping) or not set(value) <= {"connector", "tasks"}:
        raise ValueError(f"expected {{connector: w1, tasks: [w1, w2]}}, got {value!r}")
    checked: dict[str, Any] = {}
    if "connector" in value:
        checked["connector"] = _worker(value["connector"])
    if "tasks" in value:
        tasks = value["tasks"]
        if not isinstance(tasks, list):
            raise ValueError(f"expected a list of worker names, got {tasks!r}")
        checked["tasks"] = [_worker(t) for t in tasks]
    return checked


# Cluster scenarios (``workers: N``): the single worker's crash/restart give way to per-worker steps.
_WORKER: dict[str, Checker] = {"worker": _worker}
CLUSTER_VERBS: dict[str, Verb] = {
    **{verb: spec for verb, spec in VERBS.items() if verb not in ("crash", "restart_worker", "expect")},
    "start_worker": Verb(_WORKER, shorthand="worker"),
    "stop_worker": Verb(_WORKER, shorthand="worker"),
    "kill_worker": Verb(_WORKER, shorthand="worker"),
    "restart_worker": Verb(_WORKER, shorthand="worker"),
    "partition": Verb(_WORKER, shorthand="worker"),
    "heal": Verb(_WORKER, shorthand="worker"),
    "rebalance": Verb({}, empty=True),
    "expect": Verb({}, {**VERBS["expect"].optional, "assigned": _assigned, "workers": _workers_of}),
}
_NEEDS_CONNECTOR = (
    "state",
    "tasks",
    "task_count",
    "absent",
    "calls",
    "task_calls",
    "offsets",
    "cleanup",
    "incarnation",
    "restart_attempts",
    "task_restart_attempts",
    "restart_scheduled",
    "workers",
)
_TOP_LEVEL = ("name", "worker", "workers", "seed", "steps")


def _step(path: str, index: int, raw: object, verbs: Mapping[str, Verb] = VERBS) -> Step:
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise ScenarioError(
            path, "each step is a mapping with exactly one verb, e.g. '- pause: my-connector'", step=index
        )
    ((verb, body),) = raw.items()
    spec = verbs.get(verb)
    if spec is None:
        hint = (
            ""
            if verbs is CLUSTER_VERBS or verb not in CLUSTER_VERBS
            else " (cluster steps need 'workers: N')"
        )
        raise ScenarioError(
            path, f"unknown verb{hint}; known verbs: {', '.join(verbs)}", step=index, verb=str(verb)
        )
    if spec.empty:
        if body not in (None, {}):
            raise ScenarioError(path, "takes no arguments", step=index, verb=verb)
        return Step(index, verb, {})
    if spec.shorthand is not None and not isinstance(body, Mapping):
        body = {spec.shorthand: body}
    if not isinstance(body, Mapping):
        raise ScenarioError(path, f"expected a mapping of arguments, got {body!r}", step=index, verb=verb)
    args: dict[str, Any] = {}
    for key, value in body.items():
        check = spec.required.get(key) or spec.optional.get(key)
        if check is None:
            known = ", ".join([*spec.required, *spec.optional])
            raise ScenarioError(
                path, f"unknown key; {verb} takes: {known}", step=index, verb=verb, key=str(key)
            )
        try:
            args[key] = check(value)
        except ValueError as exc:
            raise ScenarioError(path, str(exc), step=index, verb=verb, key=key) from None
    for key in spec.required:
        if key not in args:
            raise ScenarioError(path, "is required", step=index, verb=verb, key=key)
    _check_combination(path, index, verb, args)
    return Step(index, verb, args)


def _check_combination(path: str, index: int, verb: str, args: dict[str, Any]) -> None:
    if verb == "expect":
        if not args:
            raise ScenarioError(
                path,
                "expects nothing: give a connector and what to check, or an error",
                step=index,
                verb=verb,
            )
        if "connector" not in args and any(k in args for k in _NEEDS_CONNECTOR):
            raise ScenarioError(
                path, "is required to check a connector", step=index, verb=verb, key="connector"
            )
        if "message" in args and "error" not in args:
            raise ScenarioError(path, "needs 'error' as well", step=index, verb=verb, key="message")
    if verb == "create" and "count" in args and "{n}" not in args["name"]:
        raise ScenarioError(
            path, "needs '{n}' to number the connectors a count creates", step=index, verb=verb, key="name"
        )
    if verb == "inject" and "for" in args and args["action"] != "block":
        raise ScenarioError(path, "only a block lasts for a duration", step=index, verb=verb, key="for")


def parse_scenario(text: str, path: str = "<scenario>") -> Scenario:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(path, f"not valid YAML: {exc}") from None
    if not isinstance(document, Mapping):
        raise ScenarioError(path, "a scenario is a mapping with 'name', optional 'worker', and 'steps'")
    for key in document:
        if key not in _TOP_LEVEL:
            raise ScenarioError(
                path, f"unknown top-level key; expected {', '.join(_TOP_LEVEL)}", key=str(key)
            )
    name = document.get("name") or Path(path).stem
    worker = document.get("worker") or {}
    steps = document.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScenarioError(path, "needs a non-empty list of steps", key="steps")
    try:
        worker_config = {k: v for k, v in _config(worker).items() if v is not None}
    except ValueError as exc:
        raise ScenarioError(path, str(exc), key="worker") from None
    workers, seed = document.get("workers"), document.get("seed")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ScenarioError(path, f"expected a number of workers (1 or more), got {workers!r}", key="workers")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ScenarioError(path, f"expected a non-negative integer, got {seed!r}", key="seed")
    if seed is not None and workers is None:
        raise ScenarioError(
            path, "a seed orders a cluster's interleavings: it needs 'workers: N'", key="seed"
        )
    verbs = CLUSTER_VERBS if workers is not None else VERBS
    parsed = tuple(_step(path, i, raw, verbs) for i, raw in enumerate(steps, 1))
    return Scenario(str(name), path, parsed, worker_config, workers, seed)


def load_scenario(path: str | Path) -> Scenario:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read: {exc.strerror or exc}") from None
    return parse_scenario(text, str(path))
