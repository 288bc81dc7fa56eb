"""A connector config key nothing reads is warned about on create and update, in Kafka's words
(``AbstractConfig.logUnused``), with the nearest known key; the config is still accepted."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from engine import Engine


def _warned(logged: list[MutableMapping[str, Any]]) -> dict[str, MutableMapping[str, Any]]:
    return {e["key"]: e for e in logged if e["event"] == "connector.unknown_key"}


async def test_typos_are_warned_on_create_and_update(tmp_path: Path) -> None:
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": "t",
        "tasks.maxx": "2",
        "fiel": "other.txt",
        "made.up": "1",
    }
    async with Engine({}) as engine:
        with capture_logs() as created:
            await engine.create_connector("files", config)
        with capture_logs() as updated:
            await engine.put_connector_config("files", {**config, "batch.sise": "10"})
        stored = await engine.connector_config("files")
    warned = _warned(created)
    assert sorted(warned) == ["fiel", "made.up", "tasks.maxx"]
    assert warned["tasks.maxx"]["message"] == (
        "The configuration 'tasks.maxx' was supplied but isn't a known config. Did you mean 'tasks.max'?"
    )
    assert warned["fiel"]["did_you_mean"] == "file"
    assert warned["made.up"]["did_you_mean"] is None
    assert (
        warned["made.up"]["message"] == "The configuration 'made.up' was supplied but isn't a known config."
    )
    assert {e["connector"] for e in warned.values()} == {"files"}
    assert {e["log_level"] for e in warned.values()} == {"warning"}
    assert _warned(updated)["batch.sise"]["did_you_mean"] == "batch.size"
    assert stored["made.up"] == "1"  # accepted, as Connect accepts it


async def test_every_key_some_reader_takes_is_quiet(tmp_path: Path) -> None:
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": "t",
        "tasks.max": "1",
        "batch.size": "5",
        "key.converter": "String",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "producer.override.linger.ms": "5",
        "topic.creation.default.partitions": "1",
        "topic.creation.default.replication.factor": "1",
        "errors.tolerance": "all",
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "t",
        "transforms.route.replacement": "u",
    }
    async with Engine({}) as engine:
        with capture_logs() as logged:
            await engine.create_connector("files", config)
    assert _warned(logged) == {}


async def test_a_connector_that_declares_no_keys_is_warned_only_about_typos() -> None:
    """It may read any key it likes (the recording connector declares none): only a near miss of a
    framework key is named."""
    async with Engine({}) as engine:
        with capture_logs() as logged:
            await engine.create_connector(
                "rec", {"connector.class": "RecordingSource", "tasks.maxx": "1", "its.own.key": "x"}
            )
    assert sorted(_warned(logged)) == ["tasks.maxx"]
