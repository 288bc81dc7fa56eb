"""Strimzi's Kafka Connect dashboard and alert rules (fixtures/, their source named in its README)
against a real worker's ``/metrics``: every metric name a query reads is there, with the labels the
query matches, joins and groups on, and the type Strimzi's exporter rules give it; data moves
source -> broker -> sink first, so the client byte counters and the statuses have something to say.

Standalone: an in-process worker on the session's test broker (noida). Cluster: two worker
processes (``engine.testing.cluster``) on it, scraped apart and read together as Prometheus would."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from engine import Engine
from engine.rest.app import make_app
from engine.testing import eventually
from engine.testing.cluster import WorkerProcess, poll_until, request, worker_cluster
from tests.integration.brokers import Broker, running_broker

FIXTURES = Path(__file__).parent / "fixtures"

# labels Prometheus adds to every series of a target (Strimzi's PodMonitor relabelling, cAdvisor):
# never on a worker's /metrics; docs/operating/metrics.md says how to set them outside Kubernetes
TARGET_LABELS = frozenset(
    {
        "namespace",
        "kubernetes_pod_name",
        "strimzi_io_kind",
        "strimzi_io_cluster",
        "pod",
        "container",
        "node_name",
        "node_ip",
    }
)
# read by the dashboard or the rules, but no worker exports them (a JVM's or the kubelet's); the
# value is what stands in for it on our /metrics
NOT_A_WORKERS: dict[str, str | None] = {
    "container_cpu_usage_seconds_total": "process_cpu_seconds_total",  # cAdvisor's, from the kubelet
    "container_last_seen": None,  # cAdvisor's; ConnectContainersDown: Prometheus' own `up` outside Kubernetes
    "jvm_memory_used_bytes": "process_resident_memory_bytes",
    "jvm_gc_collection_seconds_sum": "python_gc_collections_total",
    "jvm_threads_current": "connect_engine_threads",
}
# Connect registers these only in a distributed worker (its group coordinator); standalone has none
CLUSTER_ONLY = frozenset(
    {
        "kafka_connect_coordinator_assigned_connectors",
        "kafka_connect_coordinator_assigned_tasks",
        "kafka_connect_worker_rebalance_rebalancing",
    }
)
KEYWORDS = frozenset(
    {"by", "on", "without", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool"}
)
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


@dataclass
class Query:
    where: str  # the panel or alert
    expr: str
    selectors: dict[str, set[str]] = field(default_factory=dict)  # metric name -> labels it matches on
    joined_on: set[str] = field(default_factory=set)  # on(...): every metric of the query has them
    grouped: set[str] = field(default_factory=set)  # by(...), group_left(...): some metric has them


_CLAUSE = re.compile(r"\b(by|on|group_left|group_right|without|ignoring)\s*\(([^)]*)\)")
_SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
_BARE = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()")
_MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")


def parse_query(where: str, expr: str) -> Query:
    """The metric names and labels of one PromQL expression (enough PromQL for these queries)."""
    query = Query(where, expr)
    rest = re.sub(r"\[[^\]]*\]", " ", expr)  # range selectors
    rest = re.sub(r'"(?:[^"\\]|\\.)*"', '""', rest)  # label values ($variables, regexes)
    for clause, labels in _CLAUSE.findall(rest):
        names = {label.strip() for label in labels.split(",") if label.strip()}
        (query.joined_on if clause == "on" else query.grouped).update(names)
    rest = _CLAUSE.sub(" ", rest)
    for name, matchers in _SELECTOR.findall(rest):
        query.selectors.setdefault(name, set()).update(_MATCHER.findall(matchers))
    rest = _SELECTOR.sub(" ", rest)
    for name in _BARE.findall(rest):
        if name not in KEYWORDS and not name[0].isdigit() and "_" in name:
            query.selectors.setdefault(name, set())
    return query


def dashboard_queries() -> list[Query]:
    board = json.loads((FIXTURES / "strimzi-kafka-connect-dashboard.json").read_text())
    queries = [
        parse_query(f"{p['row']} / {p['panel']}", expr) for p in board["panels"] for expr in p["exprs"]
    ]
    queries += [
        parse_query(f"variable {v['variable']}", v["query"].removeprefix("query_result(").removesuffix(")"))
        for v in board["variables"]
    ]
    return queries


def rule_queries() -> list[Query]:
    rules = yaml.safe_load((FIXTURES / "prometheus-kafka-connect-rules.yaml").read_text())
    return [
        parse_query(f"alert {rule['alert']}", rule["expr"])
        for group in rules["spec"]["groups"]
        for rule in group["rules"]
    ]


@dataclass
class Scrape:
    """Samples by name: their label sets and values, and each family's type."""

    series: dict[str, list[tuple[dict[str, str], float]]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)

    def add(self, text: str, instance: str) -> None:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                self.types.setdefault(sample.name, family.type)
                # the target label Prometheus would add: the two workers' series stay apart
                self.series.setdefault(sample.name, []).append(
                    ({**sample.labels, "kubernetes_pod_name": instance}, sample.value)
                )

    def labels(self, name: str) -> set[str]:
        return {label for labels, _ in self.series.get(name, ()) for label in labels}

    def total(self, name: str, **match: str) -> float:
        return sum(
            value
            for labels, value in self.series.get(name, ())
            if all(labels.get(k) == v for k, v in match.items())
        )


def check(scrape: Scrape, queries: list[Query], *, cluster: bool) -> list[str]:
    """What a query would miss; empty when every panel and alert an exporter can fill has data."""
    problems = []
    for query in queries:
        present: dict[str, set[str]] = {}
        for name, matched in query.selectors.items():
            if name in NOT_A_WORKERS or (name in CLUSTER_ONLY and not cluster):
                continue
            if name not in scrape.series:
                problems.append(f"{query.where}: no {name}")
                continue
            labels = scrape.labels(name)
            present[name] = labels
            if missing := matched - labels - TARGET_LABELS:
                problems.append(f"{query.where}: {name} lacks {sorted(missing)}")
            expected = "counter" if name.endswith("_total") else "gauge"  # Strimzi's rules since 2024
            if scrape.types[name] != expected:
                problems.append(
                    f"{query.where}: {name} is a {scrape.types[name]}, Strimzi's rules say {expected}"
                )
        for name, labels in present.items():
            if missing := query.joined_on - labels:
                problems.append(f"{query.where}: {name} lacks the join labels {sorted(missing)}")
        everything = set().union(*present.values()) if present else set()
        if present and (missing := query.grouped - everything - TARGET_LABELS):
            problems.append(f"{query.where}: no metric has {sorted(missing)}")
    return problems


def test_the_fixture_is_read_whole() -> None:
    """The parser sees every metric the dashboard and the rules name (26 + the template's)."""
    names = {name for q in dashboard_queries() + rule_queries() for name in q.selectors}
    assert len(names) == 26, sorted(names)
    status = next(q for q in dashboard_queries() if q.where.endswith("/ Connector Status"))
    assert status.joined_on == {"connector"}
    assert {"connector_class", "connector_version", "connector_type", "status"} <= status.grouped
    assert set(NOT_A_WORKERS) <= names
    assert names >= CLUSTER_ONLY


def standins(scrape: Scrape) -> None:
    for standin in filter(None, NOT_A_WORKERS.values()):
        assert standin in scrape.series, standin
    assert scrape.total("process_resident_memory_bytes") > 0
    assert scrape.total("connect_engine_threads") >= 1


def file_pipeline(tmp_path: Path, tag: str) -> tuple[Path, Path, dict[str, dict[str, str]]]:
    source_file, sink_file = tmp_path / f"in-{tag}.txt", tmp_path / f"out-{tag}.txt"
    source_file.write_text("")
    topic = f"dash-{tag}"
    return (
        source_file,
        sink_file,
        {
            "src": {
                "connector.class": "FileStreamSource",
                "file": str(source_file),
                "topic": topic,
                **STRINGS,
            },
            "snk": {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic, **STRINGS},
        },
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture(scope="module")
def noida() -> Iterator[Broker]:
    with running_broker("noida") as started:
        yield started


@pytest.fixture
async def worker(noida: Broker, tmp_path: Path) -> AsyncIterator[tuple[Engine, TestClient[Any, Any]]]:
    props = {
        "bootstrap.servers": noida.bootstrap,
        "config.storage.topic": f"cfg-dash-{tmp_path.name}",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "offset.flush.interval.ms": "500",
        "task.shutdown.graceful.timeout.ms": "3000",
    }
    async with Engine(props) as engine, TestClient(TestServer(make_app(engine), host="127.0.0.1")) as client:
        yield engine, client


async def test_standalone_worker_fills_the_dashboard_and_the_rules(
    worker: tuple[Engine, TestClient[Any, Any]], tmp_path: Path
) -> None:
    engine, client = worker
    source_file, sink_file, configs = file_pipeline(tmp_path, "sa")
    for name, config in configs.items():
        response = await client.post("/connectors", json={"name": name, "config": config})
        assert response.status == 201, await response.text()
        await engine.wait_for_state(name, "RUNNING", tasks=1)
    source_file.write_text("".join(f"line-{i}\n" for i in range(20)))
    await eventually(lambda: len(lines(sink_file)) == 20, timeout=30)

    async def scraped() -> Scrape:
        response = await client.get("/metrics")
        assert response.status == 200
        scrape = Scrape()
        scrape.add(await response.text(), "standalone")
        return scrape

    scrape = await scraped()
    assert check(scrape, dashboard_queries() + rule_queries(), cluster=False) == []
    standins(scrape)
    for name in CLUSTER_ONLY:  # as in Connect: no group coordinator in standalone
        assert name not in scrape.series
    assert (
        scrape.total(
            "kafka_connect_connector_connector_class",
            connector="src",
            connector_class="engine.connectors.file.source.FileStreamSourceConnector",
        )
        == 1
    )
    assert scrape.total("kafka_connect_connector_connector_type", connector="snk", connector_type="sink") == 1
    assert scrape.series["kafka_connect_connector_connector_version"]
    for role in ("producer", "consumer"):
        assert scrape.total(f"kafka_{role}_connection_count") >= 1, role
    # the worker's admin client: listed, but idle (aiokafka drops the bootstrap connection once it
    # knows the brokers and opens one per request), so its count may read 0 between requests
    assert scrape.series["kafka_admin_client_connection_count"]
    # the lines went out through a producer and came back through a consumer: at least their bytes
    payload = sum(len(f"line-{i}") for i in range(20))
    assert scrape.total("kafka_producer_outgoing_byte_total") >= payload
    assert scrape.total("kafka_consumer_incoming_byte_total") >= payload

    # the info series go with the connector
    assert (await client.delete("/connectors/src")).status == 204
    after = await scraped()
    assert after.total("kafka_connect_connector_connector_class", connector="src") == 0
    assert after.total("kafka_connect_connector_connector_class", connector="snk") == 1


async def scrape_of(worker: WorkerProcess) -> str:
    async with aiohttp.ClientSession() as session, session.get(worker.url + "/metrics") as response:
        assert response.status == 200
        return await response.text()


async def test_a_two_worker_cluster_fills_the_dashboard_and_the_rules(noida: Broker, tmp_path: Path) -> None:
    source_file, sink_file, configs = file_pipeline(tmp_path, "cl")
    with worker_cluster(noida.bootstrap, tmp_path) as cluster:
        first, second = cluster.start_worker(), cluster.start_worker()
        await cluster.started(first, second)
        for name, config in configs.items():
            status, body = await request(first, "POST", "/connectors", {"name": name, "config": config})
            assert status == 201, body

        async def all_running() -> bool:
            for name in configs:
                code, body = await request(first, "GET", f"/connectors/{name}/status")
                if (
                    code != 200
                    or body["connector"]["state"] != "RUNNING"
                    or [t["state"] for t in body["tasks"]] != ["RUNNING"]
                ):
                    return False
            return True

        await poll_until(all_running, timeout=60)
        source_file.write_text("".join(f"line-{i}\n" for i in range(20)))
        await eventually(lambda: len(lines(sink_file)) == 20, timeout=60, interval=0.2)

        async def settled() -> Scrape | None:
            scrape = Scrape()
            for w in (first, second):
                scrape.add(await scrape_of(w), w.name)
            if (
                scrape.total("kafka_connect_coordinator_assigned_connectors") != 2
                or scrape.total("kafka_connect_coordinator_assigned_tasks") != 2
                or scrape.total("kafka_connect_worker_rebalance_rebalancing") != 0
            ):
                return None
            return scrape

        scrape = await poll_until(settled, timeout=60)
        assert check(scrape, dashboard_queries() + rule_queries(), cluster=True) == []
        standins(scrape)
        # each worker reports its own: the dashboard's "by (kubernetes_pod_name)" shows who runs what
        for w in (first, second):
            assert scrape.total("kafka_connect_worker_rebalance_rebalancing", kubernetes_pod_name=w.name) == 0
            assert (
                len(
                    [
                        1
                        for labels, _ in scrape.series["kafka_connect_coordinator_assigned_tasks"]
                        if labels["kubernetes_pod_name"] == w.name
                    ]
                )
                == 1
            )
        assert scrape.total("kafka_connect_worker_connector_count") == 2
        # the Connector Status table's join: one info series per connector, where its status is
        for name, kind in (("src", "source"), ("snk", "sink")):
            [(status_labels, _)] = [
                s for s in scrape.series["kafka_connect_connector_status"] if s[0]["connector"] == name
            ]
            [(info_labels, _)] = [
                s
                for s in scrape.series["kafka_connect_connector_connector_type"]
                if s[0]["connector"] == name
            ]
            assert info_labels["connector_type"] == kind
            assert info_labels["kubernetes_pod_name"] == status_labels["kubernetes_pod_name"]
        payload = sum(len(f"line-{i}") for i in range(20))
        assert scrape.total("kafka_producer_outgoing_byte_total") >= payload
        assert scrape.total("kafka_consumer_incoming_byte_total") >= payload
