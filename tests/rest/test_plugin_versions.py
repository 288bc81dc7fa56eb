"""KIP-891 (Kafka 4.1): ``*.plugin.version`` requirements, parsed as Connect parses them (Maven's
``VersionRange``), checked against the installed version with Connect's messages; the running
version in the status (KAFKA-18988)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from engine import Engine
from engine.configlog.records import ConnectorConfigRecord
from engine.plugins.versions import InvalidVersionSpecification, VersionMismatch, require, requirement

Client = TestClient[web.Request, web.Application]
SOURCE = "engine.connectors.file.source.FileStreamSourceConnector"
INSERT = "org.apache.kafka.connect.transforms.InsertField$Value"


def test_a_bare_version_is_a_hard_requirement_and_ranges_read_as_maven_reads_them() -> None:
    assert requirement(None) is None
    assert requirement("latest") is None
    exact = requirement(" 1.0 ")
    assert exact is not None
    assert str(exact) == "[1.0,1.0]"
    assert exact.contains("1.0.0")
    assert not exact.contains("1.0.1")
    between = requirement("[1.0,2.0)")
    assert between is not None
    assert between.contains("1.5")
    assert not between.contains("2.0")
    assert between.contains("2.0-rc1") is True  # a pre-release of 2.0 sorts before it
    upto = requirement("(,1.0]")
    assert upto is not None
    assert upto.contains("0.9")
    assert not upto.contains("1.0.1")
    assert str(requirement("[1.0,2.0),[3.0,)")) == "[1.0,2.0),[3.0,)"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("[1.0", "Unbounded range: [1.0"),
        ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
        ("(1.0)", "Single version must be surrounded by []: (1.0)"),
        ("[1.0,2.0),[1.5,3.0)", "Ranges overlap: [1.0,2.0),[1.5,3.0)"),
        ("[1.0,2.0),3.0", "Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0),3.0"),
    ],
)
def test_malformed_ranges_say_what_maven_says(spec: str, message: str) -> None:
    with pytest.raises(InvalidVersionSpecification) as raised:
        requirement(spec)
    assert str(raised.value) == message


def test_the_installed_version_outside_the_range_is_refused_with_connects_message() -> None:
    require("x.Plugin", "1.0.0", "[1.0,2.0)")
    with pytest.raises(VersionMismatch) as raised:
        require("x.Plugin", "1.0.0", "[2.0,)")
    assert (
        str(raised.value)
        == "Plugin x.Plugin has version 1.0.0 which does not match the required version range [2.0,)"
    )
    with pytest.raises(VersionMismatch, match="has version undefined which"):
        require("x.Plugin", None, "1.0")


async def validate(client: Client, config: dict[str, str]) -> dict[str, Any]:
    response = await client.put(
        "/connector-plugins/FileStreamSource/config/validate",
        json={"name": "v", "connector.class": "FileStreamSource", **config},
    )
    assert response.status == 200
    body: dict[str, Any] = await response.json()
    return {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}


async def test_validate_checks_each_version_key(client: Client, tmp_path: Any) -> None:
    base = {"file": str(tmp_path / "in.txt"), "topic": "t"}
    assert await validate(client, {**base, "connector.plugin.version": "1.0.0"}) == {}
    assert await validate(client, {**base, "connector.plugin.version": "[1.0,2.0)"}) == {}
    assert await validate(client, {**base, "connector.plugin.version": "[2.0,)"}) == {
        "connector.plugin.version": [
            f"Plugin {SOURCE} has version 1.0.0 which does not match the required version range [2.0,)"
        ]
    }
    assert await validate(client, {**base, "connector.plugin.version": "[1.0"}) == {
        "connector.plugin.version": [
            "Invalid value [1.0 for configuration connector.plugin.version: Unbounded range: [1.0"
        ]
    }
    smt = {
        **base,
        "transforms": "ins",
        "transforms.ins.type": INSERT,
        "transforms.ins.static.field": "f",
        "transforms.ins.static.value": "v",
        "transforms.ins.plugin.version": "[99,)",
    }
    errors = await validate(client, smt)
    assert list(errors) == ["transforms.ins.plugin.version"]
    assert errors["transforms.ins.plugin.version"][0].endswith(
        "which does not match the required version range [99,)"
    )
    keys = await (await client.get("/connector-plugins/FileStreamSource/config")).json()
    names = {k["name"] for k in keys}
    assert {
        "connector.plugin.version",
        "key.converter.plugin.version",
        "value.converter.plugin.version",
        "header.converter.plugin.version",
    } <= names


async def test_status_shows_the_running_versions(client: Client, engine: Engine, tmp_path: Any) -> None:
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": "t",
        "connector.plugin.version": "[1.0,2)",
    }
    (tmp_path / "in.txt").write_text("")
    assert (await client.post("/connectors", json={"name": "v", "config": config})).status == 201
    await engine.wait_for_state("v", "RUNNING", tasks=1)
    status = await (await client.get("/connectors/v/status")).json()
    assert status["connector"]["version"] == "1.0.0"
    assert [t["version"] for t in status["tasks"]] == ["1.0.0"]
    task = await (await client.get("/connectors/v/tasks/0/status")).json()
    assert (task["id"], task["state"], task["version"]) == (0, "RUNNING", "1.0.0")  # as /status says
    refused = await client.post(
        "/connectors", json={"name": "w", "config": {**config, "connector.plugin.version": "2.0"}}
    )
    assert refused.status == 400
    assert "does not match the required version range [2.0,2.0]" in (await refused.json())["message"]


async def test_a_stored_config_the_installed_plugins_do_not_satisfy_fails_at_start(
    engine: Engine, tmp_path: Any
) -> None:
    """A config written before the plugins were changed (here: straight to the config log, as an older
    worker would have) is not run with the wrong version: the connector, or the task, fails with the message."""
    (tmp_path / "in.txt").write_text("")
    base = {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": "t"}
    await engine._write("old", [ConnectorConfigRecord("old", {**base, "connector.plugin.version": "[2.0,)"})])
    status = await engine.wait_for_state("old", "FAILED")
    assert status is not None
    assert (
        f"Plugin {SOURCE} has version 1.0.0 which does not match the required version range [2.0,)"
        in status["connector"]["trace"]
    )
    smt = {
        **base,
        "transforms": "ins",
        "transforms.ins.type": INSERT,
        "transforms.ins.static.field": "f",
        "transforms.ins.static.value": "v",
        "transforms.ins.plugin.version": "[99,)",
    }
    await engine._write("smt", [ConnectorConfigRecord("smt", smt)])
    status = await engine.wait_for_state("smt", "RUNNING", tasks=["FAILED"])
    assert status is not None
    assert "which does not match the required version range [99,)" in status["tasks"][0]["trace"]
