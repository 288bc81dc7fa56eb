"""The public API is exactly what each package's ``__all__`` lists (httpx ``test_exported_members``,
trio ``test_exports``).

The lists are pinned literally so that adding, renaming or dropping a public name shows up as a
change to this file in review. Every check goes through ``getattr`` and ``dir`` rather than
``vars``, so it holds for a package whose names load lazily (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import importlib
import types

import pytest

PUBLIC_API: dict[str, list[str]] = {
    "engine": [
        "ConfigError",
        "ConnectorAlreadyExists",
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
        "DataException",
        "ExactlyOnceSupport",
        "Header",
        "IllegalWorkerStateException",
        "Importance",
        "LambdaValidator",
        "NonEmptyString",
        "NonNullValidator",
        "NotFoundException",
        "OffsetStorageReader",
        "Password",
        "Predicate",
        "Range",
        "Recommender",
        "RecordMetadata",
        "RetriableException",
        "SchemaBuilderException",
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
        "TopicPartition",
        "TransactionContext",
        "Transformation",
        "ValidList",
        "ValidString",
        "Validator",
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
}

PACKAGES = sorted(PUBLIC_API)


def ruff_order(name: str) -> tuple[int, str]:
    """RUF022's isort-style order, which ``ruff check`` enforces: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def defined_in_project(value: object) -> bool:
    """Our own classes, functions and instances; not submodules, ``annotations`` or ``TYPE_CHECKING``."""
    if isinstance(value, types.ModuleType):
        return False
    module = getattr(value, "__module__", None) or ""
    return module == "engine" or module.startswith(("engine.", "states."))


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
    public = {name for name in dir(module)
              if not name.startswith("_") and defined_in_project(getattr(module, name))}
    assert public - set(module.__all__) == set()
