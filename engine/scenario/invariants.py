"""Rules every cluster scenario run is checked against, whatever its steps expect.

They read the callbacks the instrumented connectors recorded across all workers (``CALLS``, in
the order they were made), interleaved with the moments workers were killed and config records
were written (each noted with the number of callbacks recorded by then):

* no task instance starts while another instance of it still runs: a task's ``initialize()`` on
  one worker while an instance of the same task on any worker had no ``stop()`` yet (a killed
  worker's instances end with it; a partitioned one's run on);
* ``deleted()`` exactly once across the cluster per deletion: never while no deletion of the
  connector is pending (it ran already and was cleared), never a second time unless the worker
  of the previous attempt died after it began or the scenario made ``deleted()`` fail; and a
  cleared deletion ran it at least once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.configlog.codec import PENDING_CLEANUP
from engine.testing.recording import Call


@dataclass(frozen=True, slots=True)
class _Marker:
    position: int  # callbacks recorded before it
    kind: str  # "killed" or "record"
    worker: str = ""
    key: str = ""
    present: bool = False  # a record with a value (not a tombstone)


@dataclass
class ClusterInvariants:
    """Fed as the run goes (``killed``, ``record``), checked after every settle (``check``)."""

    count: Callable[[], int]  # how many callbacks are recorded now
    name_of: Callable[[str], str] = lambda worker_id: worker_id  # worker id -> scenario name
    retries_allowed: Callable[[str], bool] = lambda connector: False  # deleted() made to fail on purpose
    violations: list[str] = field(default_factory=list)
    _markers: list[_Marker] = field(default_factory=list)
    _done_markers: int = 0
    _done_calls: int = 0
    _open: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    _pending: dict[str, bool] = field(default_factory=dict)
    _runs: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    _killed: dict[str, list[int]] = field(default_factory=dict)  # worker id -> positions it was killed at

    def killed(self, worker_id: str) -> None:
        self._markers.append(_Marker(self.count(), "killed", worker=worker_id))

    def record(self, key: str, value: bytes | None) -> None:
        if key.startswith(PENDING_CLEANUP):
            self._markers.append(_Marker(self.count(), "record", key=key, present=value is not None))

    def check(self, calls: list[Call]) -> list[str]:
        """Apply the calls and markers not seen yet; returns the violations they revealed."""
        found: list[str] = []
        for index in range(self._done_calls, len(calls)):
            self._markers_until(index, found)
            self._call(index, calls[index], found)
        self._done_calls = len(calls)
        self._markers_until(len(calls), found)
        self.violations.extend(found)
        return found

    def _markers_until(self, position: int, found: list[str]) -> None:
        while (
            self._done_markers < len(self._markers) and self._markers[self._done_markers].position <= position
        ):
            marker = self._markers[self._done_markers]
            self._done_markers += 1
            if marker.kind == "killed":
                self._killed.setdefault(marker.worker, []).append(marker.position)
                for instances in self._open.values():
                    instances.pop(marker.worker, None)
            else:
                connector = marker.key.removeprefix(PENDING_CLEANUP)
                if marker.present:
                    self._pending[connector] = True
                    self._runs[connector] = []
                elif self._pending.get(connector):
                    self._pending[connector] = False
                    if not self._runs.get(connector):
                        found.append(f"the deletion of {connector} was cleared but deleted() never ran")

    def _call(self, index: int, call: Call, found: list[str]) -> None:
        where = self.name_of(call.worker) or "?"
        if call.unit.startswith("task-"):
            key = (call.connector, call.unit)
            task = f"{call.connector}-{call.unit.removeprefix('task-')}"
            instances = self._open.setdefault(key, {})
            if call.method == "initialize":
                for worker, began in sorted(instances.items()):
                    found.append(
                        f"task {task} started on {where} (call #{index + 1}) while its instance on "
                        f"{self.name_of(worker)} (started at call #{began + 1}) had not been stopped"
                    )
                instances[call.worker] = index
            elif call.method == "stop":
                instances.pop(call.worker, None)
            return
        if call.method != "deleted":
            return
        connector = call.connector
        if not self._pending.get(connector):
            found.append(
                f"deleted() of {connector} ran on {where} (call #{index + 1}) with no deletion of it "
                "pending: it had run and been cleared already"
            )
            return
        runs = self._runs.setdefault(connector, [])
        if runs:
            worker, began = runs[-1]
            died = any(at > began for at in self._killed.get(worker, ()))
            if not died and not self.retries_allowed(connector):
                found.append(
                    f"deleted() of {connector} ran twice: on {self.name_of(worker)} (call #{began + 1}) "
                    f"and on {where} (call #{index + 1}), though the first one's worker did not die"
                )
        runs.append((call.worker, index))
