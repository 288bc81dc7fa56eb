"""The machinery of the differential suite: run the same REST steps against Java Connect and against
our worker, normalise what must differ, and compare.

A **case** is a list of steps. :class:`Call` sends one request to both workers and its answer is
compared; :class:`Await` polls a GET on both until a condition holds (states settle at their own
pace), and is not compared. Templates in paths and bodies: ``{dir}`` (a directory of the side's own,
for FileStream files), ``{topic}`` (a topic prefix of the side's own: both workers share the broker),
``{src}``/``{sink}`` (the FileStream connector classes, by alias). Answers are normalised back to the
templates, so the same case compares equal when both sides behave alike.

A **known difference** (:class:`Known`) names its reason (the section of docs/compatibility.md) and
a ``patch``: what turns our normalised answer into Java's. The suite asserts that the patched answer
equals Java's *and* that the unpatched one does not: a new difference fails the case, and so does a
fixed one (drop its ``Known`` then).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.differential.java_connect import Response, rest_call

# Answers a distributed worker gives while a rebalance settles: retried, as Connect's clients are told to.
_TRANSIENT = ("rebalance", "stale configuration", "momentarily", "Request timed out")


@dataclass(frozen=True)
class Side:
    """One worker under comparison and the values its templates take."""

    name: str  # "java" or "ours"
    url: str
    directory: str
    topic: str
    mode: str = "distributed"

    def fill(self, text: str) -> str:
        return (
            text.replace("{dir}", self.directory)
            .replace("{topic}", self.topic)
            .replace("{src}", "FileStreamSource")
            .replace("{sink}", "FileStreamSink")
        )

    def fill_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.fill(value)
        if isinstance(value, list):
            return [self.fill_value(v) for v in value]
        if isinstance(value, dict):
            return {self.fill(k): self.fill_value(v) for k, v in value.items()}
        return value


@dataclass(frozen=True)
class Answer:
    """A normalised answer: what is compared."""

    status: int
    body: Any
    headers: tuple[tuple[str, str], ...] = ()  # the compared ones (COMPARED_HEADERS), normalised

    def __str__(self) -> str:
        return f"{self.status} {dict(self.headers)} {json.dumps(self.body, sort_keys=True)[:3000]}"


Patch = Callable[[Answer], Answer]


@dataclass(frozen=True)
class Known:
    """A difference we keep, and why (the docs/compatibility.md section that explains it)."""

    reason: str
    patch: Patch


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: Any = None
    raw: str | None = None  # sent as is (malformed JSON, other media types)
    headers: Mapping[str, str] = field(default_factory=dict)
    known: Known | None = None
    normalise: Callable[[Answer], Answer] | None = None  # extra, for answers that must differ (plugin lists)
    compare: bool = True


@dataclass(frozen=True)
class Await:
    """Poll ``GET path`` until ``check(answer_body)`` holds on the side (not compared)."""

    path: str
    check: Callable[[Any], bool]
    timeout: float = 60.0


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step = Call | Await | Sleep


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Step, ...]
    modes: tuple[str, ...] = ("distributed",)  # where it runs: "distributed", "standalone" or both
    # the Java Connect releases it runs against: 4.4, the API we claim; 4.1 too for a few, to keep both
    versions: tuple[str, ...] = ("4.4",)


def send(side: Side, call: Call, *, retry_for: float = 60.0) -> Response:
    deadline = time.monotonic() + retry_for
    while True:
        raw = side.fill(call.raw) if call.raw is not None else None
        response = rest_call(
            side.url,
            call.method,
            side.fill(call.path),
            side.fill_value(call.body),
            raw=raw,
            headers=call.headers,
        )
        transient = response.status in (409, 500) and any(t in response.text for t in _TRANSIENT)
        if not transient or time.monotonic() > deadline:
            return response
        time.sleep(0.3)


def wait(side: Side, step: Await) -> None:
    deadline = time.monotonic() + step.timeout
    last: Any = None
    while time.monotonic() < deadline:
        response = rest_call(side.url, "GET", side.fill(step.path))
        last = response.json
        if response.status == 200 and step.check(last):
            return
        time.sleep(0.2)
    raise AssertionError(
        f"{side.name}: GET {side.fill(step.path)} never satisfied the check; last answer: {last}"
    )


# ---- normalisation: only what must differ ---------------------------------------------------------

_WORKER_ID = re.compile(r"^127\.0\.0\.1:\d+$")
_TIMESTAMP_KEYS = {"last_modified"}


def _generic(value: Any, side: Side) -> Any:
    """Side values back to templates; worker ids and traces (beyond their first line) to placeholders."""
    if isinstance(value, str):
        text = value.replace(side.directory, "{dir}").replace(side.topic, "{topic}")
        return "<worker>" if _WORKER_ID.match(text) else text
    if isinstance(value, list):
        return [_generic(v, side) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = _generic(key, side)
            if key == "trace" and isinstance(item, str):
                out[key] = item.splitlines()[0] if item else item
            elif key in _TIMESTAMP_KEYS and item is not None:
                out[key] = "<timestamp>"
            else:
                out[key] = _generic(item, side)
        return out
    return value


def _without_status_versions(value: Any) -> Any:
    """Kafka 4.1 (KIP-891) adds ``version`` to every connector and task status, and so do we: the value is
    each side's own plugin version, not compared (tests/rest/test_plugin_versions.py checks ours)."""
    if isinstance(value, list):
        return [_without_status_versions(v) for v in value]
    if isinstance(value, dict):
        is_status = "state" in value and "worker_id" in value
        return {
            k: _without_status_versions(v) for k, v in value.items() if not (is_status and k == "version")
        }
    return value


_BUILD_KEYS = ("version", "commit")  # GET /: the release and build each side is
# Jackson appends the parser's location; ours stops before it (docs/compatibility.md: error messages)
_JACKSON_LOCATION = re.compile(r"\n at \[Source: .*?; line: \d+, column: \d+\]")
# the list of installed connectors in "Failed to find any class ..." differs by what is installed
_AVAILABLE = re.compile(r"(available connectors are: ).*", re.DOTALL)


def _messages(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        message = _AVAILABLE.sub(r"\1<installed connectors>", _JACKSON_LOCATION.sub("", value["message"]))
        return {**value, "message": message}
    return value


COMPARED_HEADERS = ("allow", "location")


def normalise(side: Side, response: Response, path: str = "") -> Answer:
    """What is compared: the side's own values as templates, and only what must differ normalised."""
    body: Any = response.json if response.text else None
    if body is None and response.text:
        body = {"<text>": response.text}
    body = _messages(_generic(body, side))
    body = _without_status_versions(body)
    if path.split("?")[0] in ("/", "") and isinstance(body, dict) and "kafka_cluster_id" in body:
        body = {k: (f"<{k}>" if k in _BUILD_KEYS else v) for k, v in body.items()}
    headers = tuple(
        (name, response.headers[name].replace(side.url, "<url>"))
        for name in COMPARED_HEADERS
        if name in response.headers
    )
    return Answer(response.status, body, headers)


def differences(java: Any, ours: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, one line per leaf (for failure messages of long bodies)."""
    if isinstance(java, dict) and isinstance(ours, dict):
        lines: list[str] = []
        for key in [*java, *(k for k in ours if k not in java)]:
            if key not in ours:
                lines.append(f"{path}.{key}: only java: {json.dumps(java[key])[:300]}")
            elif key not in java:
                lines.append(f"{path}.{key}: only ours: {json.dumps(ours[key])[:300]}")
            else:
                lines.extend(differences(java[key], ours[key], f"{path}.{key}"))
        return lines
    keyed_java, keyed_ours = _by_name(java), _by_name(ours)
    if keyed_java is not None and keyed_ours is not None:  # config definitions: aligned by key name
        order = [k for k in keyed_java if k in keyed_ours]
        if order != [k for k in keyed_ours if k in keyed_java]:
            return [f"{path}: keys in another order: java {list(keyed_java)} | ours {list(keyed_ours)}"]
        return differences(keyed_java, keyed_ours, path)
    if isinstance(java, list) and isinstance(ours, list) and len(java) == len(ours):
        return [
            line
            for i, (a, b) in enumerate(zip(java, ours, strict=True))
            for line in differences(a, b, f"{path}[{i}]")
        ]
    if isinstance(java, list) and isinstance(ours, list) and java != ours:

        def label(v: Any) -> Any:
            return (v.get("definition") or v.get("value") or v).get("name") if isinstance(v, dict) else v

        return [
            f"{path}: java {len(java)} entries {[label(v) for v in java]}\n     | ours {len(ours)} entries "
            f"{[label(v) for v in ours]}"
        ]
    if java != ours:
        return [f"{path or '.'}: java {json.dumps(java)[:400]} | ours {json.dumps(ours)[:400]}"]
    return []


def _by_name(value: Any) -> dict[str, Any] | None:
    """A list of config definitions (or of validation results) as a dict by key name, else None."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        return None
    names = [v.get("name", (v.get("definition") or v.get("value") or {}).get("name")) for v in value]
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        return None
    return dict(zip(names, value, strict=True))


# ---- helpers for cases ------------------------------------------------------------------------------


def status_is(connector: str, task_states: tuple[str, ...] | None = None) -> Callable[[Any], bool]:
    """A status check: the connector in ``connector`` state and its tasks in ``task_states`` (any count if None)."""

    def check(body: Any) -> bool:
        if not isinstance(body, dict) or body.get("connector", {}).get("state") != connector:
            return False
        tasks = [t.get("state") for t in body.get("tasks", [])]
        return task_states is None or tuple(tasks) == task_states

    return check


def patched(
    status: int | None = None,
    body: Any = None,
    edit: Callable[[Any], Any] | None = None,
    headers: tuple[tuple[str, str], ...] | None = None,
) -> Patch:
    """A patch: Java's status, Java's whole body, or an edit of ours; Java's compared headers."""

    def apply(answer: Answer) -> Answer:
        new_body = answer.body
        if edit is not None:
            new_body = edit(json.loads(json.dumps(new_body)))
        elif body is not None:
            new_body = body
        return Answer(
            status if status is not None else answer.status,
            new_body,
            answer.headers if headers is None else headers,
        )

    return apply
