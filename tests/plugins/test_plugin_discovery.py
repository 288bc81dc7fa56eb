"""Plugin discovery: entry points, plugin.path directories, Connect's aliases and version reporting."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from engine import Engine
from engine.api.connector import SinkConnector, SourceConnector
from engine.errors import ConfigError, ConnectorClassNotFound
from engine.plugins import discovery as plugin_discovery
from engine.plugins.discovery import (
    PluginDesc,
    PluginRegistry,
    PluginType,
    plugins_from_entry_points,
    scan_plugin_path,
)
from engine.plugins.loading import load_connector_class
from engine.scenario.model import parse_scenario
from engine.scenario.runner import LogKind, ScenarioRunner
from engine.testing import RecordingSinkConnector, RecordingSinkTask, RecordingSourceConnector

RECORDING_SOURCE = "engine.testing.recording.RecordingSourceConnector"
RECORDING_SINK = "engine.testing.recording.RecordingSinkConnector"


class _Base(SourceConnector):
    def start(self, props: dict[str, str]) -> None: ...
    def stop(self) -> None: ...
    def task_class(self) -> type[RecordingSinkTask]:
        return RecordingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []


class DefaultVersionSourceConnector(_Base):
    pass


class BrokenVersionSourceConnector(_Base):
    def version(self) -> str:
        raise RuntimeError("no version today")


class AsyncVersionSourceConnector(_Base):
    async def version(self) -> str:  # type: ignore[override]
        return "9"


class NumberVersionSourceConnector(_Base):
    def version(self) -> int:  # type: ignore[override]
        return 3


class FooSourceConnector(_Base):
    pass


class FooSource:  # a transformation whose simple name is the connector's pruned name
    pass


@pytest.fixture
def isolated_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Scans append to sys.path and remember what they found: undo both after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(plugin_discovery, "_PATH_PLUGINS", {})
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("acme_"):
            del sys.modules[name]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


CONNECTOR_MODULE = """
    from engine.api.connector import SinkConnector, SourceConnector
    from engine.testing import RecordingSinkConnector, RecordingSinkTask


    class _Common:
        def start(self, props): ...
        def stop(self): ...
        def task_class(self):
            return RecordingSinkTask
        def task_configs(self, max_tasks):
            return []


    class {name}SourceConnector(_Common, SourceConnector):
        def version(self):
            return "{version}"


    class {name}Sink(_Common, SinkConnector):
        pass
"""


# ---- entry points -----------------------------------------------------------------------------


def test_the_installed_entry_points_give_the_recording_connectors() -> None:
    registry = PluginRegistry.discover()
    infos = registry.infos()
    assert {"class": RECORDING_SINK, "type": "sink", "version": "1.0-test"} in infos
    assert {"class": RECORDING_SOURCE, "type": "source", "version": "1.0-test"} in infos
    assert infos.index({"class": RECORDING_SINK, "type": "sink", "version": "1.0-test"}) < infos.index(
        {"class": RECORDING_SOURCE, "type": "source", "version": "1.0-test"}
    )
    assert registry.aliases()["RecordingSource"] == RECORDING_SOURCE
    assert registry.resolve("RecordingSinkConnector") == PluginDesc(RecordingSinkConnector, PluginType.SINK)


def test_entry_points_of_every_group_are_typed_and_broken_ones_skipped() -> None:
    eps = [
        EntryPoint("Ordered", "collections:OrderedDict", "connect_engine.transforms"),
        EntryPoint("Counter", "collections:Counter", "connect_engine.predicates"),
        EntryPoint("Fraction", "fractions:Fraction", "connect_engine.converters"),
        EntryPoint("Decimal", "decimal:Decimal", "connect_engine.header_converters"),
        EntryPoint("src", "engine.testing.recording:RecordingSourceConnector", "connect_engine.connectors"),
        EntryPoint("missing", "acme_does_not_exist:Thing", "connect_engine.transforms"),
        EntryPoint("not_a_connector", "collections:deque", "connect_engine.connectors"),
        EntryPoint("not_a_class", "os:getcwd", "connect_engine.converters"),
        EntryPoint("other_group", "collections:deque", "somebody.else"),
    ]
    found = {d.name: d.type for d in plugins_from_entry_points(eps)}
    assert found == {
        "collections.OrderedDict": PluginType.TRANSFORMATION,
        "collections.Counter": PluginType.PREDICATE,
        "fractions.Fraction": PluginType.CONVERTER,
        "decimal.Decimal": PluginType.HEADER_CONVERTER,
        RECORDING_SOURCE: PluginType.SOURCE,
    }
    registry = PluginRegistry(plugins_from_entry_points(eps))
    assert [i["type"] for i in registry.infos(connectors_only=False)] == [
        "source",
        "transformation",
        "predicate",
        "converter",
        "header_converter",
    ]
    assert [i["type"] for i in registry.infos()] == ["source"]


# ---- plugin.path ------------------------------------------------------------------------------


@pytest.mark.usefixtures("isolated_path")
def test_plugin_path_imports_plugin_packages(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write(first / "acme_flat" / "__init__.py", CONNECTOR_MODULE.format(name="Flat", version="1.2"))
    write(first / "acme_pkg" / "__init__.py", "from acme_pkg.impl import *\n")
    write(first / "acme_pkg" / "impl.py", CONNECTOR_MODULE.format(name="Pkg", version="3.4"))
    write(first / "acme_broken" / "__init__.py", "raise RuntimeError('cannot load')\n")
    write(first / "README.txt", "not a module\n")
    write(second / "acme_other" / "__init__.py", CONNECTOR_MODULE.format(name="Other", version="0.1"))

    found = scan_plugin_path(f" {first} ,, {second}, {tmp_path / 'missing'}")
    assert sorted(d.name for d in found) == [
        "acme_flat.FlatSink",
        "acme_flat.FlatSourceConnector",
        "acme_other.OtherSink",
        "acme_other.OtherSourceConnector",
        "acme_pkg.impl.PkgSink",
        "acme_pkg.impl.PkgSourceConnector",
    ]  # the imported RecordingSinkConnector and the private mixin are not plugins of these modules

    registry = PluginRegistry.discover(f"{first},{second}")
    infos = registry.infos()
    assert {"class": "acme_flat.FlatSourceConnector", "type": "source", "version": "1.2"} in infos
    assert {"class": "acme_pkg.impl.PkgSink", "type": "sink", "version": "unknown"} in infos
    assert {"class": RECORDING_SOURCE, "type": "source", "version": "1.0-test"} in infos
    assert registry.resolve("FlatSource") is not None
    assert registry.resolve("PkgSink") is not None

    # connector.class resolution sees what plugin.path brought in, by alias and by dotted name
    assert load_connector_class("OtherSource").__module__ == "acme_other"
    assert load_connector_class("acme_pkg.impl.PkgSink").__name__ == "PkgSink"
    flat = registry.resolve("FlatSource")
    assert flat is not None
    assert (
        flat.java_repr()
        == (  # Connect's PluginDesc.toString(), as "available connectors are: ..." lists it
            f"PluginDesc{{klass=class acme_flat.FlatSourceConnector, name='acme_flat.FlatSourceConnector', "
            f"version='1.2', encodedVersion=1.2, type=source, typeName='source', "
            f"location='file:{(first / 'acme_flat').resolve()}/'}}"
        )
    )


def dist_info(
    directory: Path,
    name: str,
    *,
    top_level: str | None = None,
    record: Sequence[str] = (),
    entry_points: str = "",
) -> None:
    """What ``pip install --target DIR`` leaves for a distribution: its ``*.dist-info``."""
    info = directory / f"{name}-1.0.dist-info"
    write(info / "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if top_level is not None:
        write(info / "top_level.txt", top_level + "\n")
    write(info / "RECORD", "".join(f"{path},,\n" for path in [*record, f"{info.name}/METADATA"]))
    if entry_points:
        write(info / "entry_points.txt", entry_points)


@pytest.mark.usefixtures("isolated_path")
def test_a_script_in_plugin_path_never_runs_and_only_a_distributions_entry_points_are_loaded(
    tmp_path: Path,
) -> None:
    plugins, ran = tmp_path / "plugins", tmp_path / "ran"
    # a user's own script beside the plugins, with side effects (and connectors) at top level
    write(
        plugins / "acme_script.py",
        f"open({str(ran / 'script')!r}, 'w').close()\n"
        + textwrap.dedent(CONNECTOR_MODULE.format(name="Script", version="1")),
    )
    # a distribution installed with pip install --target: its package, its dist-info with entry points,
    # and a dependency installed beside it (a distribution of its own, listed by its RECORD only)
    write(plugins / "acme_dist" / "__init__.py", CONNECTOR_MODULE.format(name="Dist", version="5.0"))
    dist_info(
        plugins,
        "acme_dist",
        top_level="acme_dist",
        entry_points="[connect_engine.connectors]\nDistSourceConnector = acme_dist:DistSourceConnector\n",
    )
    write(plugins / "acme_dependency" / "__init__.py", f"open({str(ran / 'dependency')!r}, 'w').close()\n")
    dist_info(plugins, "acme_dependency", record=["acme_dependency/__init__.py"])
    ran.mkdir()

    found = scan_plugin_path(str(plugins))
    assert [(d.name, d.location) for d in found] == [
        ("acme_dist.DistSourceConnector", f"file:{plugins.resolve()}/")
    ]  # the entry point; DistSink is not one
    assert sorted(p.name for p in ran.iterdir()) == []  # neither the script nor the dependency was imported
    assert "acme_script" not in sys.modules
    assert load_connector_class("DistSource").__module__ == "acme_dist"
    assert PluginRegistry.discover(str(plugins)).resolve("ScriptSource") is None


@pytest.mark.usefixtures("isolated_path")
def test_unknown_names_get_connects_message_and_a_broken_module_is_the_cause(tmp_path: Path) -> None:
    def not_found(name: str) -> ConnectorClassNotFound:
        with pytest.raises(ConnectorClassNotFound) as raised:
            load_connector_class(name)
        assert str(raised.value).startswith(
            f"Failed to find any class that implements Connector and which name "
            f"matches {name}, available connectors are: PluginDesc{{klass=class "
        )
        assert raised.value.http_status == 400  # Connect 4.x: a BadRequestException
        assert isinstance(raised.value, ConfigError)  # the herder fails such a connector as before
        return raised.value

    assert not_found("NoSuchThing").__cause__ is None
    assert not_found("acme_nowhere.ThingConnector").__cause__ is None  # no such module: nothing to tell
    write(tmp_path / "acme_broken.py", "import acme_missing_dependency\n")
    sys.path.append(str(tmp_path))
    broken = not_found("acme_broken.BrokenConnector")
    assert isinstance(broken.__cause__, ModuleNotFoundError)  # a module that fails to import says why
    assert broken.__cause__.name == "acme_missing_dependency"
    transform = PluginDesc(FooSource, PluginType.TRANSFORMATION)
    plugin_discovery._PATH_PLUGINS[transform.name] = transform
    not_found("FooSource")  # an alias of a transformation names no connector


# ---- aliases ----------------------------------------------------------------------------------


def test_aliases_are_full_simple_and_pruned_names() -> None:
    registry = PluginRegistry(
        [
            PluginDesc(RecordingSourceConnector, PluginType.SOURCE),
            PluginDesc(RecordingSinkConnector, PluginType.SINK),
        ]
    )
    for name in (RECORDING_SOURCE, "RecordingSourceConnector", "RecordingSource"):
        assert registry.resolve(name) == PluginDesc(RecordingSourceConnector, PluginType.SOURCE)
    assert registry.resolve("Recording") is None
    assert "RecordingSink" in registry
    assert "engine.testing.RecordingSinkConnector" not in registry  # re-exports are for dotted paths


def test_ambiguous_aliases_are_dropped_but_full_names_still_work() -> None:
    twin = type("RecordingSourceConnector", (_Base,), {"__module__": "acme_twin"})
    registry = PluginRegistry(
        [
            PluginDesc(RecordingSourceConnector, PluginType.SOURCE),
            PluginDesc(twin, PluginType.SOURCE),
            PluginDesc(FooSourceConnector, PluginType.SOURCE),
            PluginDesc(FooSource, PluginType.TRANSFORMATION),
        ]
    )
    assert registry.resolve("RecordingSourceConnector") is None
    assert registry.resolve("RecordingSource") is None
    assert registry.resolve(RECORDING_SOURCE) is not None
    assert registry.resolve("acme_twin.RecordingSourceConnector") is not None
    assert registry.resolve("FooSource") is None  # pruned name of one, simple name of the other
    assert registry.resolve("FooSourceConnector") == PluginDesc(FooSourceConnector, PluginType.SOURCE)


def test_pruned_names_follow_the_type_suffix() -> None:
    class ThingConverter:
        pass

    class ConnectorOnly(SinkConnector):
        pass

    assert PluginDesc(ThingConverter, PluginType.CONVERTER).pruned_name == "Thing"
    assert PluginDesc(ThingConverter, PluginType.TRANSFORMATION).pruned_name == "ThingConverter"
    assert PluginDesc(ConnectorOnly, PluginType.SINK).pruned_name == "ConnectorOnly"  # suffix at 0: kept


# ---- versions ---------------------------------------------------------------------------------


def test_versions_come_from_a_fresh_instance_and_are_omitted_when_undefined() -> None:
    def info(cls: type) -> dict[str, str]:
        return PluginDesc(cls, PluginType.SOURCE).info()

    assert info(DefaultVersionSourceConnector)["version"] == "unknown"
    assert info(RecordingSourceConnector)["version"] == "1.0-test"
    assert "version" not in info(BrokenVersionSourceConnector)
    assert "version" not in info(AsyncVersionSourceConnector)
    assert "version" not in info(NumberVersionSourceConnector)
    assert "version" not in info(FooSource)  # no version() at all
    assert "version" not in PluginDesc(SourceConnector, PluginType.SOURCE).info()  # abstract: no instance


@pytest.mark.usefixtures("isolated_path")
async def test_an_embedded_engine_finds_the_plugins_on_its_plugin_path(tmp_path: Path) -> None:
    """As the standalone worker does: a connector in a ``plugin.path`` directory is named by its alias."""
    write(
        tmp_path / "plugins" / "acme_embedded" / "__init__.py",
        CONNECTOR_MODULE.format(name="Emb", version="2"),
    )
    async with Engine({"plugin.path": str(tmp_path / "plugins")}) as engine:
        await engine.create_connector("e", {"connector.class": "EmbSource", "tasks.max": "1"})
        info = await engine.connector_info("e")
    assert info["type"] == "source"


@pytest.mark.usefixtures("isolated_path")
async def test_a_scenario_worker_map_finds_the_plugins_on_its_plugin_path(tmp_path: Path) -> None:
    write(
        tmp_path / "plugins" / "acme_scenario" / "__init__.py",
        CONNECTOR_MODULE.format(name="Scen", version="3"),
    )
    scenario = parse_scenario(
        f"""
name: a connector from plugin.path
worker: {{plugin.path: "{tmp_path / "plugins"}"}}
steps:
  - create: {{name: s, config: {{connector.class: ScenSource, tasks.max: 1}}}}
  - expect: {{connector: s, state: RUNNING}}
""",
        "plugin-path.yaml",
    )
    result = await ScenarioRunner(scenario, LogKind.MEMORY).run()
    assert result.passed, f"step {result.failed_step}: {result.failure}"
