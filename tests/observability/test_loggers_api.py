"""``/admin/loggers``: levels change at runtime and really filter engine events."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog
from aiohttp import web
from aiohttp.test_utils import TestClient

from engine.observability.log_levels import LOG_LEVELS
from engine.observability.logs import configure_logging

Client = TestClient[web.Request, web.Application]


@pytest.fixture(autouse=True)
def _logging() -> Iterator[None]:
    configure_logging("INFO", json=True)
    yield
    structlog.reset_defaults()
    LOG_LEVELS.reset()


async def test_put_get_and_list(client: Client) -> None:
    changed = await client.put("/admin/loggers/engine.herder", json={"level": "DEBUG"})
    assert changed.status == 200
    assert await changed.json() == ["engine.herder"]
    level = await (await client.get("/admin/loggers/engine.herder")).json()
    assert level["level"] == "DEBUG"
    assert isinstance(level["last_modified"], int)
    listed = await (await client.get("/admin/loggers")).json()
    assert listed["root"] == {"level": "INFO", "last_modified": listed["root"]["last_modified"]}
    assert listed["engine.herder"]["level"] == "DEBUG"
    again = await client.put("/admin/loggers/engine.herder", json={"level": "DEBUG"})
    assert (await (await client.get("/admin/loggers/engine.herder")).json())["last_modified"] == \
        level["last_modified"]  # unchanged level: last_modified stays
    assert again.status == 200


async def test_a_namespace_change_reaches_descendants_and_cluster_scope_is_204(client: Client) -> None:
    structlog.get_logger(component="herder").info("x")  # engine.herder has now logged
    affected = await (await client.put("/admin/loggers/engine", json={"level": "WARN"})).json()
    assert "engine.herder" in affected
    assert affected == sorted(affected)
    assert (await client.put("/admin/loggers/engine?scope=cluster", json={"level": "ERROR"})).status == 204


async def test_errors(client: Client) -> None:
    missing = await client.put("/admin/loggers/engine", json={})
    assert missing.status == 400
    assert (await missing.json())["message"] == "Desired 'level' parameter was not specified in request."
    bad = await client.put("/admin/loggers/engine", json={"level": "LOUD"})
    assert bad.status == 404
    assert (await bad.json())["message"] == "invalid log level 'LOUD'."
    unknown = await client.get("/admin/loggers/no.such.logger")
    assert unknown.status == 404
    assert (await unknown.json())["message"] == "Logger no.such.logger not found."


async def test_levels_filter_engine_events(capsys: pytest.CaptureFixture[str]) -> None:
    log = structlog.get_logger(component="rest")
    log.debug("hidden.at.info")
    LOG_LEVELS.set("engine.rest", "DEBUG")
    log.debug("shown.at.debug")
    LOG_LEVELS.set("engine.rest", "ERROR")
    log.warning("hidden.at.error")
    err = capsys.readouterr().err
    assert "shown.at.debug" in err
    assert "hidden.at.info" not in err
    assert "hidden.at.error" not in err
