"""Optional extras: a base install is silent about the libraries it lacks until a connector needs one,
and then the error says which ``pip install`` brings it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine.plugins.extras import extras_by_module, install_hint, missing_extra

ROOT = Path(__file__).resolve().parents[2]

# A base install, simulated in a fresh interpreter: importing psycopg or aio_pika fails as if absent.
BASE_INSTALL = """
import json, sys
sys.modules["psycopg"] = None
sys.modules["aio_pika"] = None
from engine.observability.logs import configure_logging
configure_logging("DEBUG", json=True)
from engine.errors import MissingExtra
from engine.plugins.discovery import PluginRegistry
from engine.plugins.loading import load_connector_class

listed = [info["class"] for info in PluginRegistry.discover().infos()]
errors = {}
for name in ("PostgresCdcSource", "PostgresCdcSourceConnector", "engine.connectors.rabbitmq.RabbitMQSinkConnector"):
    try:
        load_connector_class(name)
    except MissingExtra as exc:
        errors[name] = [str(exc), exc.http_status]
print(json.dumps({"listed": listed, "errors": errors}))
"""


def test_the_extras_come_from_the_distributions_metadata() -> None:
    extras = extras_by_module()
    assert {
        module: extras.get(module) for module in ("psycopg", "aio_pika", "pyspark", "pandas", "pytest")
    } == {
        "psycopg": "postgres",
        "aio_pika": "rabbitmq",
        "pyspark": "spark",
        "pandas": "spark",
        "pytest": None,
    }  # the testing and dev extras are not for users to be told about
    assert missing_extra(ModuleNotFoundError("No module named 'psycopg'", name="psycopg")) == (
        "psycopg",
        "postgres",
    )
    assert missing_extra(ModuleNotFoundError("No module named 'pyspark.sql'", name="pyspark.sql")) == (
        "pyspark",
        "spark",
    )
    assert missing_extra(ModuleNotFoundError("No module named 'acme'", name="acme")) is None
    assert missing_extra(ImportError("something else")) is None
    assert (
        install_hint("psycopg", "postgres")
        == "it needs psycopg, which is not installed: pip install 'connect-engine[postgres]'"
    )


def test_a_base_install_says_nothing_until_a_connector_needs_a_missing_extra() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BASE_INSTALL], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60
    )
    result = json.loads(done.stdout)
    warnings = [
        line for line in done.stderr.splitlines() if json.loads(line)["level"] not in ("debug", "info")
    ]
    assert warnings == []  # listing the plugins warns about nothing it cannot load
    assert "engine.connectors.postgres_cdc.PostgresCdcSourceConnector" not in result["listed"]
    assert "engine.connectors.file.source.FileStreamSourceConnector" in result["listed"]
    postgres = (
        "Connector class {} cannot be loaded: it needs psycopg, which is not installed: "
        "pip install 'connect-engine[postgres]'"
    )
    assert result["errors"] == {
        "PostgresCdcSource": [postgres.format("PostgresCdcSource"), 400],
        "PostgresCdcSourceConnector": [postgres.format("PostgresCdcSourceConnector"), 400],
        "engine.connectors.rabbitmq.RabbitMQSinkConnector": [
            "Connector class engine.connectors.rabbitmq.RabbitMQSinkConnector cannot be loaded: it needs aio_pika, "
            "which is not installed: pip install 'connect-engine[rabbitmq]'",
            400,
        ],
    }
