"""``POST /connector-plugins/reload`` and ``Engine.reload_plugins``: plugins installed into
``plugin.path`` while the worker runs become visible and usable; a new version of a distribution no
running connector uses replaces the old one; one a running connector uses is left alone."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from engine import Engine
from engine.plugins import discovery
from engine.rest.app import make_app
from tests.rest.conftest import FAST

Client = TestClient[web.Request, web.Application]

MODULE = '''
from engine.api import SourceConnector, SourceTask


class {cls}Task(SourceTask):
    def start(self, props):
        pass

    async def poll(self):
        import asyncio
        await asyncio.sleep(3600)

    def stop(self, connector_deleted=False):
        pass

    def version(self):
        return "{version}"


class {cls}Connector(SourceConnector):
    def start(self, props):
        pass

    def stop(self):
        pass

    def task_class(self):
        return {cls}Task

    def task_configs(self, max_tasks):
        return [{{}}]

    def version(self):
        return "{version}"
'''


def install(directory: Path, package: str, cls: str, version: str) -> None:
    """What ``pip install --target DIR`` leaves: the package and its dist-info with our entry point."""
    (directory / package).mkdir(parents=True, exist_ok=True)
    (directory / package / "__init__.py").write_text(textwrap.dedent(MODULE.format(cls=cls, version=version)))
    for old in directory.glob(f"{package}-*.dist-info"):
        for file in old.iterdir():
            file.unlink()
        old.rmdir()
    info = directory / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    (info / "top_level.txt").write_text(f"{package}\n")
    (info / "entry_points.txt").write_text(
        f"[connect_engine.connectors]\n{cls} = {package}:{cls}Connector\n")


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(discovery, "_PATH_PLUGINS", {})
    monkeypatch.setattr(discovery, "LOADED_DISTRIBUTIONS", {})
    directory = tmp_path / "plugins"
    directory.mkdir()
    yield directory
    for name in [m for m in sys.modules if m.startswith("acme_reload")]:
        del sys.modules[name]


@pytest.fixture
async def engine(plugin_dir: Path) -> AsyncIterator[Engine]:
    install(plugin_dir, "acme_reload_old", "OldAcme", "1.0")  # there from the start
    async with Engine({**FAST, "plugin.path": str(plugin_dir)}) as running:
        yield running


@pytest.fixture
async def client(engine: Engine) -> AsyncIterator[Client]:
    async with TestClient(TestServer(make_app(engine, rest_timeout=5.0), host="127.0.0.1")) as http:
        yield http


async def plugins(client: Client) -> dict[str, str | None]:
    listed = await (await client.get("/connector-plugins")).json()
    return {p["class"]: p.get("version") for p in listed}


async def reload(client: Client) -> dict[str, Any]:
    response = await client.post("/connector-plugins/reload")
    assert response.status == 200, await response.text()
    body: dict[str, Any] = await response.json()
    return body


async def test_a_plugin_installed_while_running_is_listed_and_runs_after_a_reload(
        client: Client, engine: Engine, plugin_dir: Path) -> None:
    assert "acme_reload_new.NewAcmeConnector" not in await plugins(client)
    install(plugin_dir, "acme_reload_new", "NewAcme", "1.0")
    assert "acme_reload_new.NewAcmeConnector" not in await plugins(client)  # not before the reload
    body = await reload(client)
    assert body["added"] == [{"class": "acme_reload_new.NewAcmeConnector", "type": "source", "version": "1.0"}]
    assert body["upgraded"] == body["restart_required"] == body["removed"] == []
    assert (await plugins(client))["acme_reload_new.NewAcmeConnector"] == "1.0"
    created = await client.post("/connectors", json={"name": "fresh", "config": {"connector.class": "NewAcme"}})
    assert created.status == 201, await created.text()
    await engine.wait_for_state("fresh", "RUNNING", tasks=1)
    assert (await reload(client))["added"] == []  # nothing new the second time


async def test_a_new_version_no_connector_runs_replaces_the_old_one(
        client: Client, engine: Engine, plugin_dir: Path) -> None:
    assert (await plugins(client))["acme_reload_old.OldAcmeConnector"] == "1.0"
    install(plugin_dir, "acme_reload_old", "OldAcme", "2.0")
    body = await reload(client)
    assert body["upgraded"] == [{"distribution": "acme_reload_old", "from_version": "1.0", "to_version": "2.0"}]
    assert (await plugins(client))["acme_reload_old.OldAcmeConnector"] == "2.0"
    await engine.create_connector("upgraded", {"connector.class": "OldAcme"})
    assert sys.modules["acme_reload_old"].OldAcmeConnector().version() == "2.0"


async def test_a_version_a_running_connector_uses_is_kept_until_it_stops(
        client: Client, engine: Engine, plugin_dir: Path) -> None:
    await engine.create_connector("busy", {"connector.class": "OldAcme"})
    await engine.wait_for_state("busy", "RUNNING", tasks=1)
    running_class = sys.modules["acme_reload_old"].OldAcmeConnector
    install(plugin_dir, "acme_reload_old", "OldAcme", "2.0")
    body = await reload(client)
    assert body["upgraded"] == []
    assert body["restart_required"] == [{"distribution": "acme_reload_old", "loaded_version": "1.0",
                                         "installed_version": "2.0", "used_by": ["busy"]}]
    assert sys.modules["acme_reload_old"].OldAcmeConnector is running_class  # nothing running changed
    assert (await engine.connector_status("busy"))["tasks"][0]["state"] == "RUNNING"
    # the connector moves: stop it, reload, resume it
    await engine.stop_connector("busy")
    await engine.wait_for_state("busy", "STOPPED")
    body = await reload(client)
    assert body["upgraded"] == [{"distribution": "acme_reload_old", "from_version": "1.0", "to_version": "2.0"}]
    await engine.resume_connector("busy")
    await engine.wait_for_state("busy", "RUNNING", tasks=1)
    assert sys.modules["acme_reload_old"].OldAcmeConnector().version() == "2.0"
    assert sys.modules["acme_reload_old"].OldAcmeConnector is not running_class


async def test_the_embedded_api_reloads_too(engine: Engine, plugin_dir: Path) -> None:
    install(plugin_dir, "acme_reload_embedded", "EmbeddedAcme", "0.3")
    result = engine.reload_plugins()
    assert [d.name for d in result.added] == ["acme_reload_embedded.EmbeddedAcmeConnector"]
    await engine.create_connector("embedded", {"connector.class": "EmbeddedAcme"})
    await engine.wait_for_state("embedded", "RUNNING", tasks=1)
