"""Plugins' own metrics (KIP-877, Kafka 4.1): Connect's ``Monitorable`` and ``PluginMetrics``.

A connector, task, converter, transformation or predicate that subclasses ``Monitorable`` gets
``with_plugin_metrics(metrics)`` once, right after the worker made it (before ``initialize``,
``configure`` or ``start``). Its metrics carry the tags Connect gives that plugin (``connector``;
``connector``, ``task``; plus ``converter`` = key/value/header, ``transformation`` = alias or
``predicate`` = alias) and the plugin's own; they go when the worker closes the plugin (the task
or connector stops, restarts, or is deleted), as ``PluginMetricsImpl.close`` removes them.

On ``/metrics`` a metric ``name`` is ``kafka_connect_plugins_<name>`` (Connect's group ``plugins``,
``-`` as ``_``), counters with ``_total``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

StatKind = Literal["counter", "gauge"]


@dataclass(frozen=True, slots=True)
class MetricName:
    """Connect's ``MetricName``: a name in group ``plugins``, its description and its tags."""

    name: str
    description: str
    tags: tuple[tuple[str, str], ...]
    group: str = "plugins"


class Stat:
    """What a ``Sensor`` keeps of the values recorded into it (Connect's ``MeasurableStat``)."""

    kind: StatKind = "gauge"

    def __init__(self) -> None:
        self.value = 0.0

    def record(self, value: float) -> None:
        raise NotImplementedError


class CumulativeCount(Stat):
    """How many values were recorded (a counter)."""

    kind: StatKind = "counter"

    def record(self, value: float) -> None:
        self.value += 1


class CumulativeSum(Stat):
    """The sum of the values recorded (a counter)."""

    kind: StatKind = "counter"

    def record(self, value: float) -> None:
        self.value += value


class Value(Stat):
    """The last value recorded."""

    def record(self, value: float) -> None:
        self.value = value


class Max(Stat):
    """The largest value recorded (over the plugin's life; Connect's is over its sample windows)."""

    def __init__(self) -> None:
        super().__init__()
        self.value = float("-inf")

    def record(self, value: float) -> None:
        self.value = max(self.value, value)


class Sensor:
    """Connect's ``Sensor``: ``record`` a value into every stat added to it."""

    def __init__(self, name: str, owner: PluginMetrics) -> None:
        self.name = name
        self._owner = owner
        self._stats: list[Stat] = []

    def add(self, metric_name: MetricName, stat: Stat) -> bool:
        """Report ``stat`` as ``metric_name``; False if that name is taken (Connect returns false too)."""
        if not self._owner._claim(metric_name, stat.kind, lambda: stat.value, self.name):
            return False
        self._stats.append(stat)
        return True

    def record(self, value: float = 1.0) -> None:
        for stat in self._stats:
            stat.record(value)


class PluginMetrics:
    """One plugin instance's handle (Connect's ``PluginMetricsImpl``); the worker makes it."""

    def __init__(self, tags: Mapping[str, str], registry: PluginMetricsRegistry) -> None:
        self._tags = dict(tags)
        self._registry = registry
        self._metrics: dict[MetricName, tuple[StatKind, Callable[[], float], str | None]] = {}
        self._sensors: dict[str, Sensor] = {}
        self._closed = False

    @property
    def tags(self) -> dict[str, str]:
        """The tags the worker gives every metric of this plugin."""
        return dict(self._tags)

    def metric_name(
        self, name: str, description: str = "", tags: Mapping[str, str] | None = None
    ) -> MetricName:
        """A name with this plugin's tags added; a tag of the plugin's own may not reuse one of them."""
        extra = dict(tags or {})
        clash = sorted(extra.keys() & self._tags.keys())
        if clash:
            raise ValueError(f"Cannot use {clash} as tag names: the worker sets them for this plugin")
        return MetricName(name, description, tuple(sorted({**extra, **self._tags}.items())))

    def add_metric(self, metric_name: MetricName, provider: Callable[[], float]) -> None:
        """A gauge read from ``provider()`` at every scrape (Connect's ``addMetric`` with a ``Gauge``);
        ``ValueError`` if the name is already registered."""
        if not self._claim(metric_name, "gauge", provider, None):
            raise ValueError(
                f"A metric named '{metric_name.name}' with tags {dict(metric_name.tags)} already exists"
            )

    def remove_metric(self, metric_name: MetricName) -> None:
        with self._registry.lock:
            self._metrics.pop(metric_name, None)

    def sensor(self, name: str) -> Sensor:
        """A new sensor; ``ValueError`` if this plugin already has one of that name (as Connect)."""
        with self._registry.lock:
            if name in self._sensors:
                raise ValueError("A sensor with this name already exists, can't register another one.")
            sensor = self._sensors[name] = Sensor(name, self)
        return sensor

    def remove_sensor(self, name: str) -> None:
        """Remove the sensor and the metrics added through it."""
        with self._registry.lock:
            if self._sensors.pop(name, None) is not None:
                for metric_name in [m for m, (_, _, owner) in self._metrics.items() if owner == name]:
                    del self._metrics[metric_name]

    def close(self) -> None:
        """Every metric and sensor of this plugin goes (the worker calls it when it closes the plugin)."""
        with self._registry.lock:
            self._metrics.clear()
            self._sensors.clear()
            self._closed = True
            self._registry._handles.discard(self)

    def _claim(
        self, metric_name: MetricName, kind: StatKind, read: Callable[[], float], sensor: str | None
    ) -> bool:
        with self._registry.lock:
            if self._closed or metric_name in self._metrics or self._registry._taken(metric_name):
                return False
            self._metrics[metric_name] = (kind, read, sensor)
            return True


class PluginMetricsRegistry:
    """Every open plugin handle of one worker (what ``/metrics`` reads); thread-safe, since a plugin
    may record from its own threads."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._handles: set[PluginMetrics] = set()

    def handle(self, tags: Mapping[str, str]) -> PluginMetrics:
        with self.lock:
            made = PluginMetrics(tags, self)
            self._handles.add(made)
        return made

    def _taken(self, metric_name: MetricName) -> bool:
        return any(metric_name in h._metrics for h in self._handles)

    def read(self) -> list[tuple[MetricName, StatKind, float]]:
        """Every metric now; one whose provider raises is left out of this reading."""
        with self.lock:
            handles = list(self._handles)
        values = []
        for handle in handles:
            for metric_name, (kind, read, _) in list(handle._metrics.items()):
                try:
                    values.append((metric_name, kind, float(read())))
                except Exception:  # plugin code: its metric is missing from this scrape, the rest stand
                    continue
        return values


class Monitorable:
    """Subclass (or just define ``with_plugin_metrics``) to register metrics (Connect's ``Monitorable``)."""

    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        raise NotImplementedError


def attach(
    plugin: object, registry: PluginMetricsRegistry | None, tags: Mapping[str, str]
) -> PluginMetrics | None:
    """Give ``plugin`` its handle if it is monitorable (the worker's side of ``Plugin.wrapInstance``)."""
    hook = getattr(plugin, "with_plugin_metrics", None)
    if registry is None or hook is None or not callable(hook):
        return None
    handle = registry.handle(tags)
    try:
        hook(handle)
    except BaseException:
        handle.close()
        raise
    return handle
