"""SparkSettings from worker keys; no Spark needed."""

from __future__ import annotations

import pytest

from engine.spark import SparkSettings


def test_defaults_are_a_loopback_local_session_without_ui() -> None:
    s = SparkSettings.from_worker({})
    assert (s.master, s.remote, s.app_name) == ("local[*]", None, "connect-engine")
    assert s.is_local
    assert not s.is_connect
    assert s.session_conf() == {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
    }


def test_spark_conf_keys_pass_through_and_override_local_defaults() -> None:
    s = SparkSettings.from_worker(
        {
            "spark.master": "local[2]",
            "spark.app.name": "etl",
            "spark.conf.spark.ui.enabled": "true",
            "spark.conf.spark.sql.shuffle.partitions": "4",
            "bootstrap.servers": "ignored:9092",
            "spark.conf.": "ignored",
        }
    )
    assert (s.master, s.app_name) == ("local[2]", "etl")
    assert dict(s.conf) == {"spark.ui.enabled": "true", "spark.sql.shuffle.partitions": "4"}
    conf = s.session_conf()
    assert conf["spark.ui.enabled"] == "true"
    assert conf["spark.sql.shuffle.partitions"] == "4"
    assert conf["spark.driver.host"] == "127.0.0.1"


def test_cluster_master_gets_no_local_defaults() -> None:
    s = SparkSettings.from_worker(
        {"spark.master": "spark://head:7077", "spark.conf.spark.executor.memory": "2g"}
    )
    assert not s.is_local
    assert s.session_conf() == {"spark.executor.memory": "2g"}


def test_spark_remote_selects_spark_connect() -> None:
    s = SparkSettings.from_worker({"spark.remote": "sc://spark-connect:15002"})
    assert s.is_connect
    assert not s.is_local
    assert s.remote == "sc://spark-connect:15002"
    assert s.session_conf() == {}


def test_empty_values_mean_defaults() -> None:
    s = SparkSettings.from_worker({"spark.master": "", "spark.remote": "", "spark.app.name": ""})
    assert (s.master, s.remote, s.app_name) == ("local[*]", None, "connect-engine")


def test_server_timeout_is_read_and_a_bad_one_names_the_setting() -> None:
    from engine.api.errors import ConfigException

    assert SparkSettings.from_worker({}).server_timeout_ms == 10000
    assert SparkSettings.from_worker({"spark.server.timeout.ms": "2500"}).server_timeout_ms == 2500
    for bad in ("0", "-1", "soon"):
        with pytest.raises(ConfigException, match=r"spark\.server\.timeout\.ms"):
            SparkSettings.from_worker({"spark.server.timeout.ms": bad})
