"""The /connectors resources over real HTTP: Connect's status codes, shapes and messages."""

from __future__ import annotations

import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import ConnectorInstantiationError, Engine, EngineError
from engine.api import SourceConnector
from engine.testing import CALLS, FAULTS
from tests.rest.conftest import SINK, SOURCE

Client = TestClient[web.Request, web.Application]


async def create(
    client: Client, name: str = "orders", config: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    response = await client.post("/connectors", json={"name": name, "config": config or SOURCE, **extra})
    assert response.status == 201, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def error(response: Any, status: int) -> str:
    assert response.status == status, await response.text()
    body = await response.json()
    assert body["error_code"] == status
    message: str = body["message"]
    return message


async def test_root_and_health(client: Client) -> None:
    root = await (await client.get("/")).json()
    assert set(root) == {"version", "commit", "kafka_cluster_id", "engine_version"}
    assert root["version"] == "4.4.0"  # the Connect REST API implemented: clients gate features on it
    assert root["engine_version"] == version("connect-engine")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False, cwd=Path(__file__).parent
    ).stdout.strip()
    assert root["commit"] == (commit[:16] if commit else "unknown")  # as Kafka's: 16 hex digits
    health = await client.get("/health")
    assert health.status == 200
    assert await health.json() == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests.",
    }


async def test_create_answers_201_with_location_and_connector_info(client: Client) -> None:
    response = await client.post("/connectors", json={"name": " orders ", "config": SOURCE})
    assert response.status == 201
    assert response.headers["Location"] == f"{client.make_url('/connectors/orders')}"
    odd = await client.post("/connectors", json={"name": "a b/c", "config": SOURCE})
    assert odd.headers["Location"] == str(client.make_url("")).rstrip("/") + "/connectors/a%20b%2Fc"
    info = await response.json()
    assert info["name"] == "orders"
    assert info["config"] == {**SOURCE, "name": "orders"}
    assert info["type"] == "source"


async def test_create_twice_is_409_and_bad_configs_are_400(client: Client) -> None:
    await create(client)
    assert (
        await error(await client.post("/connectors", json={"name": "orders", "config": SOURCE}), 409)
        == "Connector orders already exists"
    )
    message = await error(
        await client.post("/connectors", json={"name": "x", "config": {"tasks.max": "1"}}), 400
    )
    assert message == "Connector config contains no connector type"
    mismatch = await client.post("/connectors", json={"name": "a", "config": {**SOURCE, "name": "b"}})
    assert (
        await error(mismatch, 400)
        == "Connector name configuration (b) doesn't match connector name in the URL (a)"
    )
    invalid = await client.post("/connectors", json={"name": "y", "config": {**SOURCE, "tasks.max": "0"}})
    assert (await error(invalid, 400)).startswith(
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
    )


async def test_create_with_initial_state(client: Client, engine: Engine) -> None:
    await create(client, initial_state="PAUSED")
    await engine.wait_for_state("orders", "PAUSED")


async def test_list_and_expand(client: Client, engine: Engine) -> None:
    await create(client)
    await create(client, "billing", SINK)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    await engine.wait_for_state("billing", "RUNNING", tasks=1)
    assert await (await client.get("/connectors")).json() == ["billing", "orders"]
    expanded = await (await client.get("/connectors?expand=status&expand=info&expand=bogus")).json()
    assert set(expanded) == {"billing", "orders"}
    assert expanded["orders"]["status"]["connector"]["state"] == "RUNNING"
    assert expanded["billing"]["info"]["type"] == "sink"
    only_info = await (await client.get("/connectors?expand=info")).json()
    assert set(only_info["orders"]) == {"info"}


async def test_expand_status_is_each_status_written_compactly(client: Client, engine: Engine) -> None:
    """Thousands of statuses are megabytes: written compact (as Connect's Jackson writes them) by orjson,
    each the same as its own ``/status``."""
    for n in range(3):
        await create(client, f"v{n}")
    for n in range(3):
        await engine.wait_for_state(f"v{n}", "RUNNING", tasks=2)
    answer = await client.get("/connectors?expand=status")
    text = await answer.text()
    assert answer.content_type == "application/json"
    assert '": ' not in text
    assert '", "' not in text
    expanded = await answer.json()
    assert sorted(expanded) == ["v0", "v1", "v2"]
    for n in range(3):
        assert expanded[f"v{n}"]["status"] == await (await client.get(f"/connectors/v{n}/status")).json()


async def test_expand_status_follows_every_change_though_its_parts_are_kept_encoded(
    client: Client, engine: Engine
) -> None:
    """Each connector's part is kept encoded between answers: a pause, a new connector, a task count
    change and a deletion each show in the next answer, as they do in each connector's ``/status``."""
    for name in ("a", "b"):
        await create(client, name)
        await engine.wait_for_state(name, "RUNNING", tasks=2)
    await client.get("/connectors?expand=status")
    assert (await client.put("/connectors/a/pause")).status == 202
    await engine.wait_for_state("a", "PAUSED", tasks=2)
    await create(client, "c")
    await engine.wait_for_state("c", "RUNNING", tasks=2)
    config = await (await client.get("/connectors/b/config")).json()
    assert (await client.put("/connectors/b/config", json={**config, "tasks.max": "1"})).status == 200
    await engine.wait_for_state("b", "RUNNING", tasks=1)
    expanded = await (await client.get("/connectors?expand=status")).json()
    assert expanded["a"]["status"]["connector"]["state"] == "PAUSED"
    assert [t["id"] for t in expanded["b"]["status"]["tasks"]] == [0]
    for name in ("a", "b", "c"):
        assert expanded[name]["status"] == await (await client.get(f"/connectors/{name}/status")).json()
    assert (await client.delete("/connectors/a")).status == 204
    await engine.settled()
    assert sorted(await (await client.get("/connectors?expand=status")).json()) == ["b", "c"]


async def test_status_shapes(client: Client, engine: Engine) -> None:
    await create(client)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    status = await (await client.get("/connectors/orders/status")).json()
    assert status["name"] == "orders"
    assert status["type"] == "source"
    assert set(status["connector"]) == {"state", "worker_id", "version"}
    assert [t["id"] for t in status["tasks"]] == [0, 1]
    task = await (await client.get("/connectors/orders/tasks/1/status")).json()
    assert task == {
        "id": 1,
        "state": "RUNNING",
        "worker_id": status["connector"]["worker_id"],
        "version": "1.0-test",
    }
    assert (
        await error(await client.get("/connectors/nope/status"), 404) == "No status found for connector nope"
    )
    assert (
        await error(await client.get("/connectors/orders/tasks/9/status"), 404)
        == "No status found for task orders-9"
    )
    assert await error(await client.get("/connectors/orders/tasks/x/status"), 404) == "HTTP 404 Not Found"


async def test_config_get_put_patch(client: Client, engine: Engine) -> None:
    created = await client.put("/connectors/orders/config", json=SOURCE)
    assert created.status == 201
    assert created.headers["Location"] == f"{client.make_url('/connectors/orders')}"
    updated = await client.put("/connectors/orders/config", json={**SOURCE, "tasks.max": 1})
    assert updated.status == 200
    assert (await updated.json())["config"]["tasks.max"] == "1"
    patched = await client.patch("/connectors/orders/config", json={"tasks.max": "3", "test.x": "1"})
    assert patched.status == 200
    assert (await (await client.get("/connectors/orders/config")).json())["tasks.max"] == "3"
    removed = await client.patch("/connectors/orders/config", json={"test.x": None})
    assert "test.x" not in (await removed.json())["config"]
    assert (
        await error(await client.patch("/connectors/ghost/config", json={"a": "b"}), 404)
        == "Connector ghost not found"
    )
    assert await error(await client.get("/connectors/ghost/config"), 404) == "Connector ghost not found"


async def test_tasks_and_no_tasks_config_as_connect_4(client: Client, engine: Engine) -> None:
    await create(client)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    tasks = await (await client.get("/connectors/orders/tasks")).json()
    assert [t["id"] for t in tasks] == [
        {"connector": "orders", "task": 0},
        {"connector": "orders", "task": 1},
    ]
    # KIP-970: Connect 4.0 removed GET .../tasks-config; Jersey answers an unmatched path so
    assert await error(await client.get("/connectors/orders/tasks-config"), 404) == "HTTP 404 Not Found"


async def test_pause_resume_stop_codes(client: Client, engine: Engine) -> None:
    await create(client)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    assert (await client.put("/connectors/orders/pause")).status == 202
    await engine.wait_for_state("orders", "PAUSED", tasks=2)
    assert (await client.put("/connectors/orders/pause")).status == 202  # idempotent
    assert (await client.put("/connectors/orders/resume")).status == 202
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    assert (await client.put("/connectors/orders/stop")).status == 204
    await engine.wait_for_state("orders", "STOPPED", tasks=0)
    for verb in ("pause", "resume", "stop"):
        assert await error(await client.put(f"/connectors/ghost/{verb}"), 404) == "Unknown connector ghost"


async def test_restarts(client: Client, engine: Engine) -> None:
    await create(client)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    assert (await client.post("/connectors/orders/restart")).status == 204
    plan = await client.post("/connectors/orders/restart?includeTasks=true&onlyFailed=false")
    assert plan.status == 202
    body = await plan.json()
    assert body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    nothing = await (await client.post("/connectors/orders/restart?onlyFailed=true")).json()
    assert nothing["connector"]["state"] == "RUNNING"  # a plan selecting nothing restarts nothing
    assert (await client.post("/connectors/orders/tasks/0/restart")).status == 204
    # Connect's standalone herder's words (its distributed one says "Unknown connector: x", "Unknown task: x-5")
    assert (
        await error(await client.post("/connectors/orders/tasks/5/restart"), 404) == "Task orders-5 not found"
    )
    assert await error(await client.post("/connectors/ghost/restart"), 404) == "Connector ghost not found"
    assert (
        await error(await client.post("/connectors/ghost/restart?includeTasks=true"), 404)
        == "Unknown connector: ghost"
    )
    assert (
        await error(await client.post("/connectors/ghost/tasks/0/restart"), 404)
        == "Connector ghost not found"
    )


async def test_delete_answers_204_after_deleted_ran(client: Client, engine: Engine) -> None:
    await create(client)
    await engine.wait_for_state("orders", "RUNNING", tasks=2)
    assert (await client.delete("/connectors/orders")).status == 204
    assert CALLS.methods("orders", "connector")[-1] == "deleted"
    assert await error(await client.get("/connectors/orders"), 404) == "Connector orders not found"
    assert await error(await client.delete("/connectors/orders"), 404) == "Connector orders not found"


async def test_topics(client: Client) -> None:
    assert await (await client.get("/connectors/anything/topics")).json() == {"anything": {"topics": []}}
    assert (await client.put("/connectors/anything/topics/reset")).status == 202


async def test_offsets_need_a_stopped_connector(client: Client, engine: Engine) -> None:
    await create(client)
    assert await (await client.get("/connectors/orders/offsets")).json() == {"offsets": []}
    body = {"offsets": [{"partition": {"file": "a"}, "offset": {"line": 3}}]}
    message = await error(await client.patch("/connectors/orders/offsets", json=body), 400)
    assert message.startswith("Connectors must be in the STOPPED state before their offsets can be modified.")
    assert (
        await error(await client.patch("/connectors/orders/offsets", json={"offsets": []}), 400)
        == "Partitions / offsets need to be provided for an alter offsets request"
    )
    await client.put("/connectors/orders/stop")
    await engine.wait_for_state("orders", "STOPPED", tasks=0)
    altered = await client.patch("/connectors/orders/offsets", json=body)
    assert altered.status == 200
    assert (await altered.json())["message"].startswith(
        "The Connect framework-managed offsets for this connector have been altered successfully."
    )
    assert await (await client.get("/connectors/orders/offsets")).json() == body
    reset = await client.delete("/connectors/orders/offsets")
    assert reset.status == 200
    assert await (await client.get("/connectors/orders/offsets")).json() == {"offsets": []}
    assert (await client.delete("/connectors/orders/offsets")).status == 200  # idempotent
    assert await error(await client.get("/connectors/ghost/offsets"), 404) == "Connector ghost not found"


async def test_sink_offsets_are_checked_for_kafka_shape(client: Client, engine: Engine) -> None:
    await create(client, "billing", SINK, initial_state="STOPPED")
    bad = {"offsets": [{"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 1}}]}
    assert await error(await client.patch("/connectors/billing/offsets", json=bad), 400) == (
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"
    )
    bad_offset = {
        "offsets": [
            {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": "x"}}
        ]
    }
    assert await error(await client.patch("/connectors/billing/offsets", json=bad_offset), 400) == (
        "Failed to parse the following Kafka offset value in the provided offsets: 'x'. "
        "Offset values for sink connectors need to be integers."
    )


async def test_unknown_paths_wrong_methods_and_malformed_json(client: Client) -> None:
    assert await error(await client.get("/nowhere"), 404) == "HTTP 404 Not Found"
    wrong = await client.delete("/connectors")
    assert await error(wrong, 405) == "HTTP 405 Method Not Allowed"
    malformed = await client.post(
        "/connectors", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert (await error(malformed, 500)).startswith("Unexpected character")


async def test_distributed_only_endpoints_answer_500_on_a_standalone_worker(client: Client) -> None:
    message = await error(await client.post("/connectors/orders/tasks", json=[{}]), 500)
    assert (
        message == "Kafka Connect in standalone mode does not support externally setting task configurations."
    )
    message = await error(await client.put("/connectors/orders/fence"), 500)
    assert message == "Kafka Connect in standalone mode does not support exactly-once source connectors."


async def test_traces_start_with_the_exception_as_java_stack_traces_do(
    client: Client, engine: Engine
) -> None:
    answer = await client.post(
        "/connectors", json={"name": "broken", "config": {**SOURCE, "test.fail.start": "true"}}
    )
    assert await error(answer, 500) == "Failed to transition connector broken to state STARTED"
    await engine.wait_for_state("broken", "FAILED", tasks=0)
    status = await (await client.get("/connectors/broken/status")).json()
    lines = status["connector"]["trace"].splitlines()
    assert lines[0] == "engine.api.errors.ConnectException: injected failure in connector.start"
    assert lines[1] == "Traceback (most recent call last):"
    await create(client, "leaky")
    await engine.wait_for_state("leaky", "RUNNING", tasks=2)
    FAULTS.inject("leaky", "deleted", "raise")
    assert await error(await client.delete("/connectors/leaky"), 500) == (
        "Connector leaky was deleted, but its cleanup failed: engine.api.errors.ConnectException: injected failure "
        "in connector.deleted; it will be retried (GET /connector-cleanups)"
    )


RECORDING_SOURCE_DESC = (
    "PluginDesc{klass=class engine.testing.recording.RecordingSourceConnector, "
    "name='engine.testing.recording.RecordingSourceConnector', version='1.0-test', "
    "encodedVersion=1.0-test, type=source, typeName='source', location='classpath'}"
)


async def test_an_unknown_connector_class_is_400_listing_the_connectors_as_connect_4_does(
    client: Client,
) -> None:
    prefix = (
        "Failed to find any class that implements Connector and which name matches {}, "
        "available connectors are: PluginDesc{{"
    )
    for bad in ("no.such.Connector", "Nope", "builtins.dict", "engine.transforms.cast.Cast"):
        created = await client.post(
            "/connectors", json={"name": "x", "config": {**SOURCE, "connector.class": bad}}
        )
        message = await error(created, 400)
        assert message.startswith(prefix.format(bad)), message
        assert RECORDING_SOURCE_DESC in message
        listed = message.split("available connectors are: ", 1)[1]
        names = [part.split(",", 1)[0] for part in listed.split("PluginDesc{klass=class ")[1:]]
        assert names == sorted(names)
        validated = await client.put(
            f"/connector-plugins/{bad}/config/validate", json={"connector.class": bad}
        )
        # validation runs on another thread in Connect, which answers the ExecutionException's message
        assert await error(validated, 500) == (
            "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: " + message
        )
    put = await client.put("/connectors/y/config", json={**SOURCE, "connector.class": "Nope"})
    assert (await error(put, 400)).startswith(prefix.format("Nope"))
    assert await (await client.get("/connectors")).json() == []


class HalfWrittenSource(SourceConnector):
    """A connector whose author forgot ``task_class``: abstract, so it cannot be instantiated."""

    def start(self, props: dict[str, str]) -> None:
        pass

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass


async def test_a_connector_class_that_cannot_be_instantiated_is_500_instantiation_error_as_in_connect(
    client: Client, engine: Engine
) -> None:
    half = f"{__name__}.HalfWrittenSource"
    created = await client.post(
        "/connectors", json={"name": "x", "config": {**SOURCE, "connector.class": half}}
    )
    assert await error(created, 500) == "Instantiation error"  # Connect's Plugins.newPlugin
    put = await client.put("/connectors/x/config", json={**SOURCE, "connector.class": half})
    assert await error(put, 500) == "Instantiation error"
    validated = await client.put(f"/connector-plugins/{half}/config/validate", json={"connector.class": half})
    assert (
        await error(validated, 500) == "org.apache.kafka.connect.errors.ConnectException: Instantiation error"
    )
    with pytest.raises(
        ConnectorInstantiationError
    ) as raised:  # embedded: a typed EngineError, the cause chained
        await engine.create_connector("x", {**SOURCE, "connector.class": half})
    assert isinstance(raised.value, EngineError)
    assert isinstance(raised.value.__cause__, TypeError)
    assert "task_class" in raised.value.detail
    assert await (await client.get("/connectors")).json() == []


JACKSON = "Cannot deserialize value of type `java.lang.String` from {} (token `JsonToken.{}`) (through reference chain: {})"
CREATE_REQUEST = "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest"


async def test_objects_and_arrays_as_config_values_are_refused_as_jackson_does(client: Client) -> None:
    nested = await client.post("/connectors", json={"name": "n", "config": {**SOURCE, "a": {"b": 1}}})
    assert await error(nested, 500) == JACKSON.format(
        "Object value", "START_OBJECT", f'{CREATE_REQUEST}["config"]->java.util.LinkedHashMap["a"]'
    )
    listed = await client.post("/connectors", json={"name": "n", "config": {**SOURCE, "a": [1, 2]}})
    assert await error(listed, 500) == JACKSON.format(
        "Array value", "START_ARRAY", f'{CREATE_REQUEST}["config"]->java.util.LinkedHashMap["a"]'
    )
    named = await client.post("/connectors", json={"name": {"first": "n"}, "config": SOURCE})
    assert await error(named, 500) == JACKSON.format(
        "Object value", "START_OBJECT", f'{CREATE_REQUEST}["name"]'
    )
    put = await client.put("/connectors/n/config", json={**SOURCE, "a": {"b": 1}})
    assert await error(put, 500) == JACKSON.format(
        "Object value", "START_OBJECT", 'java.util.LinkedHashMap["a"]'
    )
    validate = await client.put(
        "/connector-plugins/RecordingSource/config/validate", json={**SOURCE, "a": []}
    )
    assert await error(validate, 500) == JACKSON.format(
        "Array value", "START_ARRAY", 'java.util.LinkedHashMap["a"]'
    )
    assert await (await client.get("/connectors")).json() == []  # nothing written
    await create(client, "n")
    patch = await client.patch("/connectors/n/config", json={"a": {"b": 1}})
    assert await error(patch, 500) == JACKSON.format(
        "Object value", "START_OBJECT", 'java.util.LinkedHashMap["a"]'
    )
    assert "a" not in await (await client.get("/connectors/n/config")).json()


async def test_scalars_become_their_json_text_and_null_values_are_config_errors(client: Client) -> None:
    body = (
        '{"name": 42, "config": {"connector.class": "engine.testing.RecordingSourceConnector", "tasks.max": 2, '
        '"x.float": 1.50, "x.exp": 1e3, "x.true": true, "x.false": false, "x.neg": -0}}'
    )
    created = await client.post("/connectors", data=body, headers={"Content-Type": "application/json"})
    assert created.status == 201, await created.text()
    config = await (await client.get("/connectors/42/config")).json()
    assert config == {
        "connector.class": "engine.testing.RecordingSourceConnector",
        "tasks.max": "2",
        "x.float": "1.50",
        "x.exp": "1e3",
        "x.true": "true",
        "x.false": "false",
        "x.neg": "-0",
        "name": "42",
    }
    null = await client.post("/connectors", json={"name": "nul", "config": {**SOURCE, "x": None}})
    assert await error(null, 400) == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Null value can not be supplied as the configuration value.\n"
        "You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
    )


async def test_unknown_create_fields_and_non_object_bodies_are_500_as_in_connect(client: Client) -> None:
    unknown = await client.post("/connectors", json={"name": "n", "config": SOURCE, "tasks": []})
    assert await error(unknown, 500) == (
        f'Unrecognized field "tasks" (class {CREATE_REQUEST}), not marked as ignorable (4 known properties: "name", '
        f'"config", "initial_state", "initial_offsets"]) (through reference chain: {CREATE_REQUEST}["tasks"])'
    )
    array = await client.post("/connectors", json=[{"name": "n"}])
    assert await error(array, 500) == (
        f"Cannot deserialize value of type `{CREATE_REQUEST}` from Array value (token `JsonToken.START_ARRAY`)"
    )
    scalar = await client.put("/connectors/n/config", json="text")
    assert await error(scalar, 500) == (
        "Cannot deserialize value of type `java.util.LinkedHashMap<java.lang.String,java.lang.String>` from String "
        "value (token `JsonToken.VALUE_STRING`)"
    )
    assert await (await client.get("/connectors")).json() == []


async def test_a_body_that_is_not_utf8_answers_jacksons_message(client: Client) -> None:
    latin1 = '{"name": "caf\u00e9", "config": {}}'.encode("latin-1")  # é as one byte, then a quote
    answer = await client.post("/connectors", data=latin1, headers={"Content-Type": "application/json"})
    assert await error(answer, 500) == "Invalid UTF-8 middle byte 0x22"
    answer = await client.put(
        "/connectors/x/config", data=b"\xff{}", headers={"Content-Type": "application/json"}
    )
    assert await error(answer, 500) == "Invalid UTF-8 start byte 0xff"
