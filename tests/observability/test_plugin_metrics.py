"""KIP-877: a connector, its task, an SMT and a predicate register their own metrics; a scrape of
``/metrics`` shows them with Connect's tags, and they go when the connector is deleted."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.api import (
    ConfigDef,
    CumulativeCount,
    CumulativeSum,
    Monitorable,
    PluginMetrics,
    Predicate,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    Transformation,
)
from engine.api.metrics import PluginMetricsRegistry
from engine.testing import eventually
from tests.observability.test_metrics import Samples, parse

Client = TestClient[web.Request, web.Application]
HERE = __name__


class MeteredSource(SourceConnector, Monitorable):
    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        self.started = 0
        metrics.add_metric(metrics.metric_name("started", "1 once start() ran."), lambda: self.started)

    def start(self, props: dict[str, str]) -> None:
        self.started = 1
        self._props = props

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return MeteredSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def config(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return "1.0"


class MeteredSourceTask(SourceTask, Monitorable):
    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        self.polls = metrics.sensor("polls")
        self.polls.add(metrics.metric_name("poll-count", "poll() calls.", {"kind": "poll"}), CumulativeCount())

    def start(self, props: dict[str, str]) -> None:
        self.sent = 0

    def poll(self) -> list[SourceRecord] | None:
        self.polls.record()
        if self.sent >= 3:
            time.sleep(0.01)
            return None
        self.sent += 1
        return [SourceRecord(topic="metered", value=f"record-{self.sent}", source_partition={"p": 0},
                             source_offset={"o": self.sent})]

    def stop(self, connector_deleted: bool = False) -> None:
        return None

    def version(self) -> str:
        return "1.0"


class CountingSmt(Transformation[Any], Monitorable):
    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        self.seen = metrics.sensor("seen")
        self.seen.add(metrics.metric_name("records-seen", "Records through this SMT."), CumulativeCount())
        self.seen.add(metrics.metric_name("value-chars", "Characters of the values seen."), CumulativeSum())
        self.last = 0.0
        metrics.add_metric(metrics.metric_name("last-value-chars", "The last value's length."), lambda: self.last)

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def apply(self, record: Any) -> Any:
        self.last = float(len(record.value))
        self.seen.record(self.last)
        return record

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        return None

    def version(self) -> str:
        return "1.0"


class AlwaysTrue(Predicate[Any], Monitorable):
    def with_plugin_metrics(self, metrics: PluginMetrics) -> None:
        self.tests = metrics.sensor("tests")
        self.tests.add(metrics.metric_name("tests"), CumulativeCount())

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def test(self, record: Any) -> bool:
        self.tests.record()
        return True

    def config(self) -> ConfigDef:
        return ConfigDef()

    def close(self) -> None:
        return None


CONFIG = {"connector.class": f"{HERE}.MeteredSource", "transforms": "count",
          "transforms.count.type": f"{HERE}.CountingSmt", "transforms.count.predicate": "yes",
          "predicates": "yes", "predicates.yes.type": f"{HERE}.AlwaysTrue",
          "value.converter": "org.apache.kafka.connect.storage.StringConverter",
          "key.converter": "org.apache.kafka.connect.storage.StringConverter"}


def plugin(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((f"kafka_connect_plugins_{name}", frozenset(labels.items())))


async def test_plugins_metrics_carry_connects_tags_and_go_with_the_connector(client: Client, engine: Engine) -> None:
    assert (await client.post("/connectors", json={"name": "m", "config": CONFIG})).status == 201
    await engine.wait_for_state("m", "RUNNING", tasks=1)

    async def scraped() -> Samples:
        response = await client.get("/metrics")
        assert response.status == 200
        return parse(await response.text())

    async def three_records() -> Samples | None:
        samples = await scraped()
        return samples if plugin(samples, "records_seen_total", connector="m", task="0",
                                 transformation="count") == 3 else None

    samples = await eventually(three_records, timeout=10)
    assert plugin(samples, "started", connector="m") == 1  # the connector's gauge: connector tag only
    assert (plugin(samples, "poll_count_total", connector="m", task="0", kind="poll") or 0) >= 3  # its own tag too
    task_smt = {"connector": "m", "task": "0", "transformation": "count"}
    assert plugin(samples, "value_chars_total", **task_smt) == 3 * len("record-1")
    assert plugin(samples, "last_value_chars", **task_smt) == len("record-3")
    assert (plugin(samples, "tests_total", connector="m", task="0", predicate="yes") or 0) >= 3
    text = await (await client.get("/metrics")).text()
    assert "# TYPE kafka_connect_plugins_records_seen_total counter" in text
    assert "# TYPE kafka_connect_plugins_last_value_chars gauge" in text

    assert (await client.delete("/connectors/m")).status == 204
    gone = await scraped()
    assert not [name for name, _ in gone if name.startswith("kafka_connect_plugins_")]


def test_a_plugin_may_not_reuse_the_workers_tags_nor_a_taken_name() -> None:
    registry = PluginMetricsRegistry()
    handle = registry.handle({"connector": "c", "task": "0"})
    with pytest.raises(ValueError, match=r"\['task'\]"):
        handle.metric_name("x", "", {"task": "1"})
    name = handle.metric_name("x")
    handle.add_metric(name, lambda: 1.0)
    with pytest.raises(ValueError, match="already exists"):
        handle.add_metric(name, lambda: 2.0)
    handle.sensor("s")
    with pytest.raises(ValueError, match="A sensor with this name already exists"):
        handle.sensor("s")
    assert [(n.name, v) for n, _, v in registry.read()] == [("x", 1.0)]
    handle.close()
    assert registry.read() == []
