"""The worker-key table (engine/config/worker_keys.py) against the source: every key the engine reads
from the worker's properties is listed, nothing listed is read nowhere, and stated defaults agree.

A read is found by scanning each module's syntax tree for a key (a string literal, or a module-level
string constant, imported ones included) that is
- looked up in a worker mapping: ``worker.get(k)``, ``raw[k]``, ``self.engine.worker.get(k)``,
  ``self.properties.get(k)`` (receivers ending in ``worker``, ``raw`` or ``properties``), or
- passed to a function together with a worker mapping: ``int_setting(raw, k, 10)``,
  ``_count(worker, k, 5)``, ``_setting(k, connector, worker, default)``;
and the keys of module-level ``*DEFAULTS`` dicts in modules that read worker keys. Built-in
connectors are not scanned: they see their connector's config only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from engine import Engine
from engine.cli.main import _parser
from engine.config.worker_keys import WORKER_KEYS, by_name, help_epilog

ENGINE = Path(__file__).resolve().parents[2] / "engine"
WORKER_MAPPINGS = {"worker", "raw", "properties"}
KEY = re.compile(r"[a-z][a-z0-9]*(\.[a-z0-9]+)*")


@dataclass
class Reads:
    keys: dict[str, set[str]] = field(default_factory=dict)  # key -> modules reading it
    defaults: dict[str, set[str]] = field(default_factory=dict)  # key -> defaults stated beside a read

    def add(self, key: str, module: str, default: object = None) -> None:
        self.keys.setdefault(key, set()).add(module)
        if isinstance(default, int) or (isinstance(default, str) and default):
            self.defaults.setdefault(key, set()).add(str(default))


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ENGINE.parent).with_suffix("").parts).removesuffix(".__init__")


def _constants() -> dict[str, dict[str, str]]:
    """Module -> its module-level ``NAME = "literal"`` constants."""
    table: dict[str, dict[str, str]] = {}
    for path in ENGINE.rglob("*.py"):
        found = table.setdefault(_module(path), {})
        for node in ast.parse(path.read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value.value
    return table


def _is_worker(node: ast.AST) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return name in WORKER_MAPPINGS


def _scan() -> Reads:
    constants = _constants()
    reads = Reads()
    for path in ENGINE.rglob("*.py"):
        module = _module(path)
        if module.startswith("engine.connectors."):  # connectors see their own config, never the worker's
            continue
        tree = ast.parse(path.read_text())
        names = dict(constants.get(module, {}))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    value = constants.get(node.module, {}).get(alias.name)
                    if value is not None:
                        names[alias.asname or alias.name] = value

        def key_of(node: ast.AST, names: dict[str, str] = names) -> str | None:
            value = (
                node.value
                if isinstance(node, ast.Constant)
                else names.get(node.id)
                if isinstance(node, ast.Name)
                else None
            )
            return value if isinstance(value, str) and KEY.fullmatch(value) else None

        def literal(node: ast.AST | None) -> object:
            return node.value if isinstance(node, ast.Constant) else None

        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and _is_worker(node.value)
                and (key := key_of(node.slice))
            ):
                reads.add(key, module)
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and _is_worker(func.value)
                and node.args
            ):
                if key := key_of(node.args[0]):
                    reads.add(key, module, literal(node.args[1]) if len(node.args) > 1 else None)
            elif any(_is_worker(arg) for arg in node.args):
                keys = [(n, key) for n, arg in enumerate(node.args) if (key := key_of(arg))]
                for n, key in keys:
                    following = node.args[n + 1] if n + 1 < len(node.args) else None
                    reads.add(key, module, literal(following) if not _is_worker(following or node) else None)
        if module in {m for ms in reads.keys.values() for m in ms}:
            for node in tree.body:
                if (
                    isinstance(node, ast.AnnAssign | ast.Assign)
                    and isinstance(node.value, ast.Dict)
                    and any(
                        isinstance(t, ast.Name) and t.id.endswith("DEFAULTS")
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    )
                ):
                    for k, v in zip(node.value.keys, node.value.values, strict=True):
                        if k is not None and (key := key_of(k)):
                            reads.add(key, module, literal(v))
        for (
            node
        ) in tree.body:  # a module's WORKER_KEYS mapping names worker keys it reads (values: not defaults)
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.value, ast.Dict)
                and isinstance(node.target, ast.Name)
                and node.target.id == "WORKER_KEYS"
            ):
                for k in node.value.keys:
                    if k is not None and (key := key_of(k)):
                        reads.add(key, module)
    return reads


@pytest.fixture(scope="module")
def reads() -> Reads:
    return _scan()


def test_the_scan_finds_the_readers_it_is_meant_to(reads: Reads) -> None:
    """Guards the scan itself: one key per reading style."""
    assert "engine.config.worker" in reads.keys["connector.deleted.max.retries"]  # int_setting(raw, k, 10)
    assert "engine.storage.factory" in reads.keys["status.storage.partitions"]  # _count(worker, k, 5)
    assert "engine.distributed.settings" in reads.keys["rest.advertised.listener.url"]  # raw.get(k, "")
    assert "engine.rest.app" in reads.keys["plugin.path"]  # engine.worker.get(k)
    assert "engine.rest.app" in reads.keys["rest.basic.auth.credentials.file"]  # an imported constant
    assert "engine.spark.settings" in reads.keys["spark.master"]  # a module constant
    assert "engine.rest.listening" in reads.keys["listeners"]  # worker.raw[k]
    assert "engine.worker.task_converters" in reads.keys["key.converter"]  # _setting(k, connector, worker, d)
    assert "engine.worker.data_plane" in reads.keys["offset.flush.timeout.ms"]  # DATA_PLANE_DEFAULTS


def test_every_worker_key_the_code_reads_is_in_the_table(reads: Reads) -> None:
    listed = set(by_name())
    missing = {key: sorted(modules) for key, modules in reads.keys.items() if key not in listed}
    assert missing == {}, "add these to engine/config/worker_keys.py"


def test_every_key_in_the_table_is_read_somewhere(reads: Reads) -> None:
    unread = [k.name for k in WORKER_KEYS if not k.family and k.name not in reads.keys]
    assert unread == []


def test_the_table_states_the_defaults_the_code_uses(reads: Reads) -> None:
    table = by_name()
    wrong = {
        key: (table[key].default, sorted(found))
        for key, found in reads.defaults.items()
        if key in table and found != {table[key].default}
    }
    assert wrong == {}


def test_the_table_has_no_duplicates() -> None:
    assert len(by_name()) == len(WORKER_KEYS)


@pytest.mark.parametrize("command", ["standalone", "distributed"])
def test_help_lists_every_worker_key(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    text = capsys.readouterr().out
    assert help_epilog(distributed=command == "distributed") in text
    shown = [k.name for k in WORKER_KEYS if command == "distributed" or not k.distributed_only]
    assert all(f"    {name} " in text for name in shown)
    assert ("group.id" in text) == (command == "distributed")
    for name in ("plugin.path", "config.providers", "rest.basic.auth.credentials.file", "spark.master"):
        assert name in text


def test_an_unknown_worker_key_is_warned_about_with_the_nearest_known_one() -> None:
    """Connect logs a supplied key it does not know; a typo (``listners``) otherwise starts a worker on
    the default silently."""
    props = {
        "listners": "http://127.0.0.1:0",
        "offset.flush.intervall.ms": "10",
        "made.up.key": "1",
        # known: worker keys, a family, client keys the worker hands to its clients
        "offset.flush.interval.ms": "10",
        "spark.conf.spark.ui.enabled": "false",
        "producer.linger.ms": "5",
        "request.timeout.ms": "5000",
        "security.protocol": "PLAINTEXT",
    }
    with capture_logs() as logged:
        Engine(props)
    warned = {e["key"]: e for e in logged if e["event"] == "worker.unknown_key"}
    assert sorted(warned) == ["listners", "made.up.key", "offset.flush.intervall.ms"]
    assert warned["listners"]["did_you_mean"] == "listeners"
    assert warned["offset.flush.intervall.ms"]["did_you_mean"] == "offset.flush.interval.ms"
    assert warned["made.up.key"]["did_you_mean"] is None
    assert warned["listners"]["log_level"] == "warning"
    assert warned["listners"]["message"] == (
        "The configuration 'listners' was supplied but isn't a known config. Did you mean 'listeners'?"
    )
