"""The generated reference (docs/gen_reference.py) covers what the code defines.

The pages are generated at every ``mkdocs build``, so they cannot go stale; these checks make
sure the generator misses nothing: every worker key, framework connector key, route, command,
metric family and shipped scenario appears on its page.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engine.api import SinkConnector, SourceConnector
from engine.config.worker_keys import WORKER_KEYS
from engine.rest.openapi import document
from engine.scenario.builtin import builtin_scenarios
from engine.validation.framework_keys import framework_config_def

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_reference", module)
    spec.loader.exec_module(module)
    return module


def test_every_worker_key_is_on_its_page(gen: ModuleType) -> None:
    page = gen.worker_keys_page()
    assert all(f"| `{key.name}` |" in page for key in WORKER_KEYS)


def test_every_framework_connector_key_is_on_its_page(gen: ModuleType) -> None:
    page = gen.connector_keys_page()
    for cls in (SourceConnector, SinkConnector):
        for name, key in framework_config_def(cls).config_keys.items():
            assert key.internal or f"| `{name}` |" in page, name


def test_every_route_is_on_the_rest_page(gen: ModuleType) -> None:
    page = gen.rest_api_page()
    for path, item in document()["paths"].items():
        for method in item:
            if method in ("get", "post", "put", "patch", "delete"):
                assert f"## {method.upper()} `{path}`" in page, (method, path)


def test_every_command_is_on_the_cli_page(gen: ModuleType) -> None:
    page = gen.cli_page()
    for command in ("pipeline", "demo", "standalone", "distributed", "diagram", "replay"):
        assert f"## `connect-engine {command}`" in page
    assert "--list" in page  # replay's


def test_the_metrics_page_has_both_kinds_of_family(gen: ModuleType) -> None:
    page = gen.metrics_page()
    for name in (
        "connect_engine_transitions_total",
        "connect_engine_task_offset_commits_total",
        "kafka_connect_source_task_source_record_poll_total",
        "kafka_connect_sink_task_sink_record_read_total",
        "kafka_connect_worker_connector_count",
        "connect_engine_spark_jobs_total",
    ):
        assert f"| `{name}` |" in page, name


def test_every_shipped_scenario_is_on_its_page(gen: ModuleType) -> None:
    page = gen.scenarios_page()
    assert all(f"| `{scenario.name}` |" in page for scenario in builtin_scenarios())


def test_the_site_navigation_lists_every_generated_page(gen: ModuleType) -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(path in nav for path in gen.pages())
