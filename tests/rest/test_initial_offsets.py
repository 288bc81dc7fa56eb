"""KIP-995 ``initial_offsets`` on ``POST /connectors`` and ``Engine.create_connector``: checked as
KIP-875's ``PATCH /offsets`` checks them, written before the connector first runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.api import TopicPartition as ApiTopicPartition
from engine.testing import RecordingSinkConnector, RecordingSourceConnector, eventually
from engine.topics.base import TopicPartition
from tests.rest.conftest import SINK, SOURCE

Client = TestClient[web.Request, web.Application]
FILE_SOURCE = "engine.connectors.file.FileStreamSourceConnector"
FRAMEWORK = ("The Connect framework-managed offsets for this connector have been altered successfully. However, if "
             "this connector manages offsets externally, they will need to be manually altered in the system that "
             "the connector uses.")
SEEN: list[Any] = []


class ManagingSource(RecordingSourceConnector):
    """A source that manages its offsets itself: ``alter_offsets`` answers True."""

    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        SEEN.append(offsets)
        return True


class RefusingSource(RecordingSourceConnector):
    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        raise NotImplementedError


class PickySink(RecordingSinkConnector):
    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[ApiTopicPartition, int | None]) -> bool:
        if any(offset is not None and offset > 100 for offset in offsets.values()):
            raise ValueError("offsets above 100 are not allowed here")
        return False


async def answer(response: Any, status: int) -> Any:
    assert response.status == status, await response.text()
    return await response.json()


async def test_a_file_source_starts_at_the_given_position(client: Client, engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("skipped\nfirst\nsecond\n")
    config = {"connector.class": FILE_SOURCE, "file": str(path), "topic": "lines",
              "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    offsets = [{"partition": {"filename": str(path)}, "offset": {"position": len("skipped\n")}}]
    info = await answer(await client.post("/connectors", json={"name": "lines", "config": config,
                                                               "initial_offsets": offsets}), 201)
    assert info["offsets_status"] == "The offsets for this connector have been altered successfully"  # its alter_offsets
    assert info["name"] == "lines"
    assert info["type"] == "source"
    topics = engine.topics

    def read() -> list[bytes | None]:
        try:
            return [r.value for r in topics.records(TopicPartition("lines", 0))]  # type: ignore[attr-defined]
        except KeyError:
            return []

    await eventually(lambda: read() == [b"first", b"second"])
    status = await answer(await client.get("/connectors/lines/status"), 200)
    assert status["connector"]["state"] == "RUNNING"


async def test_the_connector_s_own_alter_offsets_decides_the_message(client: Client, engine: Engine) -> None:
    SEEN.clear()
    config = {**SOURCE, "connector.class": f"{__name__}.ManagingSource"}
    offsets = [{"partition": {"file": "a"}, "offset": {"line": 3}}]
    info = await answer(await client.post("/connectors", json={"name": "managed", "config": config,
                                                               "initial_offsets": offsets,
                                                               "initial_state": "PAUSED"}), 201)
    assert info["offsets_status"] == "The offsets for this connector have been altered successfully"
    assert [{json.dumps({"file": "a"}): {"line": 3}}] == SEEN
    assert await answer(await client.get("/connectors/managed/offsets"), 200) == {"offsets": offsets}
    await engine.wait_for_state("managed", "PAUSED")


async def test_without_initial_offsets_the_answer_has_no_offsets_status(client: Client) -> None:
    info = await answer(await client.post("/connectors", json={"name": "plain", "config": SOURCE}), 201)
    assert "offsets_status" not in info


async def test_refused_offsets_create_nothing(client: Client, engine: Engine) -> None:
    empty = await client.post("/connectors", json={"name": "a", "config": SOURCE, "initial_offsets": []})
    assert (await answer(empty, 400))["message"] == \
        "Partitions / offsets need to be provided for an alter offsets request"
    not_a_map = await client.post("/connectors", json={"name": "b", "config": SOURCE,
                                                       "initial_offsets": [{"partition": None}]})
    assert (await answer(not_a_map, 400))["message"] == \
        "The partition for a source connector offset cannot be null or missing"
    sink_shape = await client.post("/connectors", json={
        "name": "c", "config": {**SINK, "connector.class": f"{__name__}.PickySink"},
        "initial_offsets": [{"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 1}}]})
    assert (await answer(sink_shape, 400))["message"] == \
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"
    unsupported = await client.post("/connectors", json={
        "name": "d", "config": {**SOURCE, "connector.class": f"{__name__}.RefusingSource"},
        "initial_offsets": [{"partition": {"file": "a"}, "offset": {"line": 3}}]})
    assert (await answer(unsupported, 500))["message"] == (
        "Failed to modify offsets for connector d because it doesn't support external modification of offsets")
    assert await answer(await client.get("/connectors"), 200) == []


async def test_a_sink_s_initial_offsets_become_its_consumer_group_s(client: Client, engine: Engine) -> None:
    await engine.topics.create_topic("t", 2)
    offsets = [{"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 7}}]
    config = {**SINK, "connector.class": f"{__name__}.PickySink"}
    info = await answer(await client.post("/connectors", json={"name": "snk", "config": config,
                                                               "initial_offsets": offsets,
                                                               "initial_state": "STOPPED"}), 201)
    assert info["offsets_status"] == FRAMEWORK
    assert await answer(await client.get("/connectors/snk/offsets"), 200) == {"offsets": offsets}
    too_far = [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 101}}]
    refused = await client.post("/connectors", json={"name": "snk2", "config": config, "initial_offsets": too_far})
    assert refused.status == 500
    assert "snk2" not in await engine.connectors()


async def test_the_embedded_api_takes_initial_offsets(engine: Engine) -> None:
    SEEN.clear()
    config = {**SOURCE, "connector.class": f"{__name__}.ManagingSource"}
    offsets = [{"partition": {"file": "b"}, "offset": {"line": 9}}]
    info = await engine.create_connector("embedded", config, initial_offsets=offsets)
    assert info["offsets_status"] == "The offsets for this connector have been altered successfully"
    assert await engine.connector_offsets("embedded") == {"offsets": offsets}
    await engine.wait_for_state("embedded", "RUNNING", tasks=2)
