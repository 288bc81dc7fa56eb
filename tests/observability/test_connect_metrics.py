"""Kafka Connect's families at ``GET /metrics``, named as Strimzi's JMX-exporter rules name them, on a
live worker moving records source -> in-process topic -> sink; what an alert rule or a dashboard reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.observability.connect_metrics import ConnectMetrics
from engine.storage.status import MemoryStatusStore, Status
from engine.testing import FAULTS, eventually
from tests.observability.test_metrics import Samples, parse
from tests.rest.conftest import FAST, SOURCE
from tests.worker.probes import SINK, SINKS, SOURCES, records
from tests.worker.probes import SOURCE as PROBE_SOURCE

Client = TestClient[web.Request, web.Application]

STRINGS = {"value.converter": "org.apache.kafka.connect.storage.StringConverter",
           "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
PIPE_SOURCE = {"connector.class": PROBE_SOURCE, **STRINGS}
PIPE_SINK = {"connector.class": SINK, "topics": "events", **STRINGS}


@pytest.fixture(autouse=True)
def _fresh_probes() -> Iterator[None]:
    SOURCES.clear()
    SINKS.clear()
    yield
    SOURCES.clear()
    SINKS.clear()


def kc(samples: Samples, name: str, **labels: str) -> float | None:
    """A ``kafka_connect_*`` sample, None when the series is absent."""
    return samples.get((f"kafka_connect_{name}", frozenset(labels.items())))


async def scrape(client: Client) -> Samples:
    response = await client.get("/metrics")
    assert response.status == 200
    return parse(await response.text())


async def pipeline(engine: Engine) -> None:
    await engine.create_connector("src", PIPE_SOURCE)
    await engine.create_connector("snk", PIPE_SINK)
    await engine.wait_for_state("src", "RUNNING", tasks=1)
    await engine.wait_for_state("snk", "RUNNING", tasks=1)


async def test_record_counters_and_statuses_follow_a_pipeline(client: Client, engine: Engine) -> None:
    await pipeline(engine)
    feed = SOURCES["src"].feed
    feed.put_nowait(records("events", ["a", "b", "c"]))
    feed.put_nowait(records("events", ["d", "e"], start=3))
    await eventually(lambda: len(SINKS["snk"].received) == 5)
    samples = await scrape(client)
    src, snk = {"connector": "src", "task": "0"}, {"connector": "snk", "task": "0"}
    assert kc(samples, "source_task_source_record_poll_total", **src) == 5
    assert kc(samples, "source_task_source_record_write_total", **src) == 5
    assert kc(samples, "sink_task_sink_record_read_total", **snk) == 5
    assert kc(samples, "sink_task_sink_record_send_total", **snk) == 5
    assert kc(samples, "sink_task_sink_record_read_total", **src) is None  # a source has no sink families
    assert kc(samples, "connector_task_batch_size_max", **src) == 3
    assert kc(samples, "connector_task_batch_size_avg", **src) == 2.5
    assert kc(samples, "connector_status", connector="src", status="running") == 1
    assert kc(samples, "connector_status", connector="src", status="paused") is None  # only the current one
    assert kc(samples, "connector_task_status", connector="snk", task="0", status="running") == 1
    assert kc(samples, "worker_connector_count") == 2
    assert kc(samples, "worker_task_count") == 2
    assert kc(samples, "worker_connector_running_task_count", connector="src") == 1
    assert kc(samples, "worker_connector_failed_task_count", connector="src") == 0
    assert kc(samples, "task_error_total_record_errors", **src) == 0

    # pausing commits the source's offsets: a successful commit attempt, timed
    assert (await client.put("/connectors/src/pause")).status == 202
    await engine.wait_for_state("src", "PAUSED", tasks=1)
    paused = await scrape(client)
    assert kc(paused, "connector_status", connector="src", status="paused") == 1
    assert kc(paused, "connector_status", connector="src", status="running") is None
    assert kc(paused, "connector_task_status", connector="src", task="0", status="paused") == 1
    assert kc(paused, "connector_task_offset_commit_success_percentage", **src) == 100
    assert kc(paused, "connector_task_offset_commit_failure_percentage", **src) == 0
    assert (kc(paused, "connector_task_offset_commit_max_time_ms", **src) or 0) >= 0
    assert paused[("connect_engine_task_offset_commits_total",
                   frozenset({**src, "outcome": "succeeded"}.items()))] >= 1
    assert kc(paused, "worker_connector_paused_task_count", connector="src") == 1

    # the counters are the task instance's: a deleted connector's series go with it
    assert (await client.delete("/connectors/src")).status == 204
    gone = await scrape(client)
    assert kc(gone, "source_task_source_record_poll_total", **src) is None
    assert kc(gone, "connector_status", connector="src", status="paused") is None
    assert kc(gone, "worker_connector_count") == 1


async def test_a_failed_connector_and_a_failed_task_read_failed(client: Client, engine: Engine) -> None:
    FAULTS.inject("broken", "start", "raise")
    await client.post("/connectors", json={"name": "broken", "config": SOURCE})  # 500: its start raised
    await engine.wait_for_state("broken", "FAILED")
    await pipeline(engine)
    SOURCES["src"].feed.put_nowait(records("events", ["a"]))
    SOURCES["src"].feed.put_nowait(RuntimeError("the source is gone"))
    await engine.wait_for_state("src", "RUNNING", tasks=["FAILED"])
    response = await client.get("/metrics")
    text = await response.text()
    # what an alert rule on Strimzi's names matches: kafka_connect_connector_status{status="failed"} == 1
    assert 'kafka_connect_connector_status{connector="broken",status="failed"} 1.0' in text
    samples = parse(text)
    assert [labels for (name, labels) in samples if name == "kafka_connect_connector_status"
            and dict(labels)["connector"] == "broken"] == [frozenset({"connector": "broken", "status": "failed"}.items())]
    assert kc(samples, "connector_task_status", connector="src", task="0", status="failed") == 1
    assert kc(samples, "worker_connector_failed_task_count", connector="src") == 1
    # a failed task keeps its metrics until it is stopped, as in Connect
    assert kc(samples, "source_task_source_record_poll_total", connector="src", task="0") == 1


async def test_a_tolerated_conversion_error_is_counted(client: Client, engine: Engine) -> None:
    sink = {**PIPE_SINK, "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false", "errors.tolerance": "all"}
    await engine.create_connector("snk", sink)
    await engine.wait_for_state("snk", "RUNNING", tasks=1)
    producer = engine.topics.producer()
    for value in (b'"fine"', b"{not json", b'"also fine"'):
        await producer.send("events", None, value)
    await eventually(lambda: len(SINKS["snk"].received) == 2)
    samples = await scrape(client)
    snk = {"connector": "snk", "task": "0"}
    assert kc(samples, "task_error_total_record_errors", **snk) == 1
    assert kc(samples, "task_error_total_record_failures", **snk) == 1
    assert kc(samples, "task_error_total_records_skipped", **snk) == 1
    assert kc(samples, "task_error_total_retries", **snk) == 0
    assert (kc(samples, "task_error_last_error_timestamp", **snk) or 0) > 0
    assert kc(samples, "sink_task_sink_record_read_total", **snk) == 3
    assert kc(samples, "sink_task_sink_record_send_total", **snk) == 2


async def test_openmetrics_when_the_scraper_asks_for_it(client: Client, engine: Engine) -> None:
    await pipeline(engine)
    SOURCES["src"].feed.put_nowait(records("events", ["a"]))
    await eventually(lambda: len(SINKS["snk"].received) == 1)
    om = await client.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0; "
                                                         "charset=utf-8,text/plain;version=0.0.4;q=0.5"})
    assert om.headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    body = await om.text()
    assert body.endswith("# EOF\n")
    assert "# TYPE kafka_connect_source_task_source_record_poll counter" in body
    assert 'kafka_connect_source_task_source_record_poll_total{connector="src",task="0"} 1.0' in body
    assert "# TYPE connect_engine_transitions counter" in body
    for accept in (None, "text/plain", "*/*"):
        plain = await client.get("/metrics", headers={"Accept": accept} if accept else {})
        assert plain.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = await plain.text()
        assert "# EOF" not in text
        assert "# TYPE kafka_connect_source_task_source_record_poll_total counter" in text


async def test_two_engines_count_apart(engine: Engine) -> None:
    async with Engine(FAST) as other:
        await pipeline(other)
        SOURCES["src"].feed.put_nowait(records("events", ["a", "b"]))
        await eventually(lambda: len(SINKS["snk"].received) == 2)
        assert other.metrics.registry is not engine.metrics.registry
        theirs, mine = parse(other.metrics.render()), parse(engine.metrics.render())
        assert kc(theirs, "source_task_source_record_poll_total", connector="src", task="0") == 2
        assert kc(theirs, "worker_connector_count") == 2
        assert not [name for name, _ in mine if name.startswith(("kafka_connect_source_task", "kafka_connect_sink"))]
        assert kc(mine, "worker_connector_count") == 0


def test_a_cluster_member_reports_only_its_own_work_and_its_rebalances() -> None:
    status = MemoryStatusStore()
    status.put_connector("mine", Status("RUNNING", "w1:8083", 3))
    status.put_task("mine", 0, Status("RUNNING", "w1:8083", 3))
    status.put_task("mine", 1, Status("FAILED", "w2:8083", 3))
    status.put_connector("theirs", Status("PAUSED", "w2:8083", 3))
    metrics = ConnectMetrics(status, worker_id="w1:8083")
    metrics.rebalances = lambda: (4, 7)
    samples = {(s.name, frozenset(s.labels.items())): s.value for f in metrics.collect() for s in f.samples}
    assert samples[("kafka_connect_connector_status", frozenset({"connector": "mine", "status": "running"}.items()))] == 1
    assert not [k for k in samples if dict(k[1]).get("connector") == "theirs"]
    assert ("kafka_connect_connector_task_status",
            frozenset({"connector": "mine", "task": "1", "status": "failed"}.items())) not in samples
    assert samples[("kafka_connect_worker_connector_count", frozenset())] == 1
    assert samples[("kafka_connect_worker_task_count", frozenset())] == 1
    assert samples[("kafka_connect_worker_rebalance_completed_rebalances_total", frozenset())] == 4
    assert samples[("kafka_connect_worker_rebalance_epoch", frozenset())] == 7
