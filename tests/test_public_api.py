"""The public API is exactly what each package's ``__all__`` lists (httpx ``test_exported_members``,
trio ``test_exports``): ``engine`` and every module the documentation sends users to
(``engine.PUBLIC_MODULES``, drawn as the table in ``engine/__init__.py``'s docstring).

The lists are pinned literally so that adding, renaming or dropping a public name shows up as a
change to this file in review. Every check goes through ``getattr`` and ``dir`` rather than
``vars``, so it holds for a package whose names load lazily (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import importlib
import re
import types
from typing import TypeVar

import pytest

import engine

PUBLIC_API: dict[str, list[str]] = {
    "engine": [
        "PUBLIC_MODULES",
        "ConfigError",
        "ConnectorAlreadyExists",
        "ConnectorInstantiationError",
        "ConnectorNotFound",
        "DeletionOutcome",
        "Engine",
        "EngineError",
        "EngineNotRunning",
        "IllegalTransition",
        "SettleTimeout",
        "StateTimeout",
        "TaskNotFound",
        "TransitionEvent",
    ],
    "engine.api": [
        "NO_DEFAULT",
        "AlreadyExistsException",
        "CaseInsensitiveValidString",
        "CompositeValidator",
        "Config",
        "ConfigDef",
        "ConfigDefError",
        "ConfigException",
        "ConfigKey",
        "ConfigType",
        "ConfigValue",
        "ConnectException",
        "ConnectRecord",
        "Connector",
        "ConnectorContext",
        "ConnectorTransactionBoundaries",
        "CumulativeCount",
        "CumulativeSum",
        "DataException",
        "ExactlyOnceSupport",
        "Header",
        "IllegalWorkerStateException",
        "Importance",
        "LambdaValidator",
        "Max",
        "MetricName",
        "Monitorable",
        "NonEmptyString",
        "NonNullValidator",
        "NotFoundException",
        "OffsetStorageReader",
        "Password",
        "PluginMetrics",
        "Predicate",
        "Range",
        "Recommender",
        "RecordMetadata",
        "RetriableException",
        "SchemaBuilderException",
        "Sensor",
        "SinkConnector",
        "SinkConnectorContext",
        "SinkRecord",
        "SinkTask",
        "SinkTaskContext",
        "SourceConnector",
        "SourceConnectorContext",
        "SourceRecord",
        "SourceTask",
        "SourceTaskContext",
        "Task",
        "TopicIdentity",
        "TopicPartition",
        "TransactionContext",
        "Transformation",
        "ValidList",
        "ValidString",
        "Validator",
        "Value",
        "Width",
    ],
    "engine.data": [
        "Date",
        "Decimal",
        "Field",
        "Schema",
        "SchemaAndValue",
        "SchemaBuilder",
        "Struct",
        "Time",
        "Timestamp",
        "Type",
        "validate_value",
    ],
    "engine.rest.auth": [
        "CREDENTIALS_FILE_KEY",
        "BasicAuth",
        "PasswordHash",
        "hash_password",
        "load_credentials",
        "main",
    ],
    "engine.spark": [
        "Durations",
        "JobOwner",
        "SparkJobCancelled",
        "SparkJobFailed",
        "SparkMetrics",
        "SparkSettings",
        "SparkSupervisor",
        "SparkUnreachable",
        "TaskSpark",
        "prometheus_families",
    ],
    "engine.topics": [
        "BatchAck",
        "ConsumedRecord",
        "Consumer",
        "MemoryTopics",
        "NotAssigned",
        "OffsetReset",
        "OutgoingRecord",
        "Partitioner",
        "Producer",
        "RebalanceCallback",
        "RecordMetadata",
        "TopicPartition",
        "Topics",
        "TopicsError",
        "UnknownTopic",
        "murmur2",
    ],
    "engine.testing": [
        "CALLS",
        "FAULTS",
        "Call",
        "CallLog",
        "FaultAction",
        "Faults",
        "RecordingSinkConnector",
        "RecordingSinkTask",
        "RecordingSourceConnector",
        "RecordingSourceTask",
        "SimulatedCrash",
        "TransitionRecorder",
        "VirtualTimers",
        "assert_transitions",
        "describe",
        "eventually",
        "instrumented",
    ],
    "engine.testing.cluster": [
        "HOST",
        "START_TIMEOUT_S",
        "WorkerCluster",
        "WorkerProcess",
        "free_port",
        "poll_until",
        "request",
        "worker_cluster",
    ],
    "engine.testing.kafka": [
        "DEFAULT_USERS",
        "ApacheKafka",
        "KafkaNode",
        "KafkaUnavailable",
        "apache_kafka",
        "kafka_classpath",
    ],
}

PACKAGES = engine.PUBLIC_MODULES


def ruff_order(name: str) -> tuple[int, str]:
    """RUF022's isort-style order, which ``ruff check`` enforces: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def defined_in_project(value: object) -> bool:
    """Our own classes, functions and instances; not submodules, ``annotations`` or ``TYPE_CHECKING``."""
    if isinstance(value, types.ModuleType | TypeVar):
        return False
    module = getattr(value, "__module__", None) or ""
    return module == "engine" or module.startswith(("engine.", "states."))


def exported_by(module: types.ModuleType, value: object) -> bool:
    """A package exports what it defines or re-exports from the project; a plain module (no ``__path__``)
    only what it defines itself: the names it imports for its own use are not its API."""
    if not defined_in_project(value):
        return False
    return hasattr(module, "__path__") or getattr(value, "__module__", None) == module.__name__


def test_every_public_module_is_pinned() -> None:
    assert sorted(PUBLIC_API) == sorted(engine.PUBLIC_MODULES)


def test_the_docstring_table_lists_the_public_modules() -> None:
    """The table in ``engine``'s docstring names ``PUBLIC_MODULES``, in their order."""
    rows = re.findall(r"^``([\w.]+)``  ", engine.__doc__ or "", flags=re.MULTILINE)
    assert tuple(rows) == engine.PUBLIC_MODULES


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_pinned(package: str) -> None:
    assert importlib.import_module(package).__all__ == PUBLIC_API[package]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_listed_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted(package: str) -> None:
    names = importlib.import_module(package).__all__
    assert names == sorted(names, key=ruff_order)
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_complete(package: str) -> None:
    """Every public name the package defines or re-exports from the project is in ``__all__``."""
    module = importlib.import_module(package)
    public = {
        name
        for name in dir(module)
        if not name.startswith("_") and exported_by(module, getattr(module, name))
    }
    assert public - set(module.__all__) == set()
