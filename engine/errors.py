"""The engine's exception tree, and the HTTP status each maps to (500 unless said).

Every class below, drawn under its parent (``tests/test_errors.py`` checks the drawing is exactly
this module's classes, so a new one must be drawn here); a base from outside this module is named
on the class's line.

* EngineError                     root of every error raised on purpose (an ``Exception``)
  * ConfigError                   bad connector or worker config (400); ``errors`` maps key -> messages
    * ConnectorClassNotFound      ``connector.class`` names no connector (400, as Connect 4.x)
      * MissingExtra              the plugin needs an optional extra's library; names the pip install
  * ConnectorInstantiationError   the connector class cannot be instantiated (500, "Instantiation error")
  * InvalidRequest                a request that cannot be carried out as asked (400)
  * Forbidden                     an operation the worker config disables (403), e.g. topic tracking
  * ConnectorNotFound             (404)
  * TaskNotFound                  (404)
  * ConnectorAlreadyExists        (409)
  * CleanupPending                a previous incarnation of the name is still being cleaned up (409)
  * IllegalTransition             a trigger the lifecycle table forbids (409); also a
                                  ``states.IllegalTransition``
  * EngineNotRunning              the engine was used before ``__aenter__`` or after shutdown
  * OperationTimeout              a wait exceeded its bound (500), naming what was pending
  * ConnectorStartFailed          standalone, when asked: the connector is written but its start failed (500)
  * InternalTopicError            an internal topic (config, status or offsets) cannot be created, read
                                  or written (retriable); ``topic`` names it
    * ConfigLogError              the config log cannot be read or written (retriable)
      * CorruptRecord             one record could not be decoded: skipped, logged, counted
  * SettleTimeout                 ``Engine.settled`` gave up; also a ``TimeoutError``
  * StateTimeout                  ``wait_for_state`` gave up, saying what it saw; also a ``TimeoutError``
  * RebalanceNeeded               distributed: a config change awaits a rebalance (409, retry)
  * NotLeader                     distributed: only the leader may do this; REST forwards it (409
                                  when it cannot)
  * FencingConflict               distributed: new task configs came while their zombies were fenced (409)
  * ForwardingFailed              distributed: a forwarded request did not get through (its status)
"""

from __future__ import annotations

import traceback
from typing import ClassVar

import states


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""

    http_status: ClassVar[int] = 500
    retriable: ClassVar[bool] = False


class ConfigError(EngineError):
    """A connector or worker configuration is invalid."""

    http_status = 400

    def __init__(self, message: str, *, errors: dict[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or {}


class ConnectorClassNotFound(ConfigError):
    """``connector.class`` names no connector: 400, as Connect 4.x's validation turns the plain
    ``ConnectException`` of ``Plugins.connectorClass`` into a ``BadRequestException`` (3.9 answered 500)."""

    def __init__(
        self, message: str, *, errors: dict[str, list[str]] | None = None, summary: str | None = None
    ) -> None:
        super().__init__(message, errors=errors)
        # one short line for a terminal (CLI, scenario): Connect's message lists every plugin in full
        self.summary = summary or message


class MissingExtra(ConnectorClassNotFound):
    """A built-in plugin needs a library that only an optional extra installs; the message names the
    ``pip install 'connect-engine[extra]'`` to run. 400 over REST, as a class that cannot be found."""

    def __init__(self, name: str, module: str, extra: str, hint: str) -> None:
        message = f"Connector class {name} cannot be loaded: {hint}"
        super().__init__(message, errors={"connector.class": [message]})
        self.module = module
        self.extra = extra


class ConnectorInstantiationError(EngineError):
    """``connector.class`` names a connector class that cannot be instantiated (abstract: a method left
    unwritten, or a constructor that raises). Connect's ``Plugins.newPlugin`` throws
    ``ConnectException("Instantiation error")``, which REST answers with 500; the cause is chained."""

    http_status = 500

    def __init__(self, class_name: str, cause: BaseException) -> None:
        super().__init__("Instantiation error")
        self.class_name = class_name
        self.detail = f"Could not instantiate class {class_name}: {cause}"


class InvalidRequest(EngineError):
    """A request that cannot be carried out as asked (400), e.g. offsets of a running connector."""

    http_status = 400


class Forbidden(EngineError):
    """The worker's configuration disables this operation (403)."""

    http_status = 403


class ConnectorNotFound(EngineError):
    http_status = 404

    def __init__(self, connector: str, message: str | None = None) -> None:
        super().__init__(message or f"Connector {connector} not found")
        self.connector = connector


class TaskNotFound(EngineError):
    http_status = 404

    def __init__(self, connector: str, task: int) -> None:
        super().__init__(f"Unknown task: {connector}-{task}")
        self.connector = connector
        self.task = task


class ConnectorAlreadyExists(EngineError):
    http_status = 409

    def __init__(self, connector: str) -> None:
        super().__init__(f"Connector {connector} already exists")
        self.connector = connector


class CleanupPending(EngineError):
    """Creating a name whose previous incarnation's ``deleted()`` has not finished (or is retried)."""

    http_status = 409

    def __init__(self, connector: str, detail: str) -> None:
        super().__init__(
            f"Connector {connector} cannot be created yet: a previous connector of that name is "
            f"still being cleaned up ({detail}). Try again once GET /connector-cleanups no longer "
            f"lists it."
        )
        self.connector = connector


class IllegalTransition(EngineError, states.IllegalTransition):
    """A lifecycle trigger the transition table does not allow from the current state."""

    http_status = 409

    @classmethod
    def from_states(cls, exc: states.IllegalTransition) -> IllegalTransition:
        return cls(unit=exc.unit, state=exc.state, trigger=exc.trigger)


class EngineNotRunning(EngineError):
    def __init__(self, message: str = "The engine is not running") -> None:
        super().__init__(message)


class OperationTimeout(EngineError):
    def __init__(self, what: str) -> None:
        super().__init__(f"Request timed out. The worker is currently {what}")
        self.what = what


class ConnectorStartFailed(EngineError):
    """The connector is written, but its start failed (it is FAILED): Kafka's standalone herder answers
    the write with 500 and ``WorkerConnector.doTransitionTo``'s message. Raised when a write asks for it
    (REST does; embedded callers get the info and read the status)."""

    def __init__(self, connector: str, target: str) -> None:
        super().__init__(f"Failed to transition connector {connector} to state {target}")
        self.connector = connector
        self.target = target


class InternalTopicError(EngineError):
    """One of Connect's internal topics (``config``, ``status`` or ``offset.storage.topic``) cannot be
    created, read or written; the message names the topic, and so does ``topic`` when it is known."""

    retriable = True

    def __init__(self, message: str, *, topic: str | None = None) -> None:
        super().__init__(message)
        self.topic = topic


class ConfigLogError(InternalTopicError):
    """The config log cannot be read or written: on Kafka, the config topic's ``InternalTopicError``."""


class CorruptRecord(ConfigLogError):
    """A config-log record whose key or value cannot be understood."""

    retriable = False

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"Skipping config record {key!r}: {reason}")
        self.key = key
        self.reason = reason


class SettleTimeout(EngineError, TimeoutError):
    """``Engine.settled`` gave up: something kept working (or hung) past the deadline."""


class StateTimeout(EngineError, TimeoutError):
    """``wait_for_state`` gave up; the message says what the connector looked like instead."""

    def __init__(self, connector: str, wanted: str, observed: str) -> None:
        super().__init__(f"Connector {connector} did not reach {wanted}: {observed}")
        self.connector = connector
        self.wanted = wanted
        self.observed = observed


class RebalanceNeeded(EngineError):
    """Distributed: the group has not yet rebalanced after a config change (Connect's 409)."""

    http_status = 409
    retriable = True

    def __init__(self) -> None:
        super().__init__(
            "Cannot complete request momentarily due to stale configuration "
            "(typically caused by a concurrent config change)"
        )


class NotLeader(EngineError):
    """Distributed: a leader-only request reached a follower; ``leader_url`` is where it belongs.

    The REST layer forwards it there; raised to an embedded caller, it says where to go.
    """

    http_status = 409
    retriable = True

    def __init__(self, leader_url: str | None) -> None:
        if leader_url is None:
            message = (
                "Cannot complete request momentarily due to no known leader URL, "
                "likely because a rebalance was underway."
            )
        else:
            message = f"This worker is not the leader; the request belongs to the leader at {leader_url}"
        super().__init__(message)
        self.leader_url = leader_url


class FencingConflict(EngineError):
    """Distributed: a zombie fencing round lost a race with new task configs (Connect's 409)."""

    http_status = 409


class ForwardingFailed(EngineError):
    """Distributed: a request forwarded to another worker failed; carries that worker's status."""

    retriable = True

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    @property
    def http_status(self) -> int:  # type: ignore[override]
        return self.status


def trace_of(exc: BaseException) -> str:
    """An exception with its traceback, as statuses and deletion outcomes carry it (Connect's ``trace``).

    Laid out as a Java stack trace, because UIs and CLIs show a trace's first line: first
    ``module.Type: message``, then the Python frames (most recent call last), then each cause under
    ``Caused by:`` (an implicit context under ``During handling of:``), and the members of an
    exception group under ``Contained:``.
    """
    lines: list[str] = []
    _trace_lines(exc, "", lines, set())
    return "\n".join(lines).rstrip()


def _trace_lines(exc: BaseException, label: str, lines: list[str], seen: set[int]) -> None:
    seen.add(id(exc))
    first, *rest = _header(exc)
    lines += [label + first, *rest]
    if exc.__traceback__ is not None:
        lines.append("Traceback (most recent call last):")
        lines += "".join(traceback.format_tb(exc.__traceback__)).rstrip("\n").split("\n")
    related: list[tuple[BaseException, str]] = [
        (member, "Contained: ") for member in (exc.exceptions if isinstance(exc, BaseExceptionGroup) else ())
    ]
    if exc.__cause__ is not None:
        related.append((exc.__cause__, "Caused by: "))
    elif exc.__context__ is not None and not exc.__suppress_context__:
        related.append((exc.__context__, "During handling of: "))
    for other, other_label in related:
        if id(other) not in seen:  # chains can loop
            _trace_lines(other, other_label, lines, seen)


def short_message(exc: BaseException) -> str:
    """``str(exc)``, but the one-line summary for a class that names no connector (what a terminal
    shows; REST keeps Connect's full message)."""
    return exc.summary if isinstance(exc, ConnectorClassNotFound) else str(exc)


def describe(exc: BaseException, type_name: str | None = None) -> str:
    """Java's ``Throwable.toString()``: the qualified type (or ``type_name``), then ``: message`` if any."""
    name = type_name or type(exc).__qualname__
    if type_name is None and type(exc).__module__ not in ("builtins", "__main__"):
        name = f"{type(exc).__module__}.{name}"
    try:
        message = str(exc)
    except Exception:
        message = "<exception str() failed>"
    return f"{name}: {message}" if message else name


def _header(exc: BaseException) -> list[str]:
    """``describe(exc)``, its lines, then the exception's notes."""
    header = describe(exc).split("\n")
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list | tuple):
        header += [str(note) for note in notes]
    return header
