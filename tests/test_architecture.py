"""The layout keeps its promises: no import cycle at all, a light ``engine.api``, few loose modules.

The layer order itself is import-linter's job (``lint-imports``, contracts in pyproject.toml);
these are the rules it cannot express. Every import statement counts: module-level, inside a
function ("lazy") and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_PACKAGES = ("herder", "worker", "storage", "topics", "rest", "spark", "distributed", "configlog")


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for top in ("engine", "states"):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _imported(module: str, path: Path, package: bool, known: dict[str, tuple[Path, bool]]) -> Iterator[str]:
    """Every engine/states module an import statement anywhere in ``path`` names."""

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if package else module.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
            ]
        else:
            continue
        for target in targets:
            resolved = resolve(target)
            if resolved is not None and resolved != module:
                yield resolved


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_back_through_any_import_lazy_or_type_checking() -> None:
    known = _modules()
    graph = {name: set(_imported(name, path, package, known)) for name, (path, package) in known.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import engine.errors\n"
        "def f():\n    from engine.api import task\n"
    )
    known = {
        "engine.errors": (source, False),
        "engine.api": (source, True),
        "engine.api.task": (source, False),
    }
    assert set(_imported("m", source, False, known)) == {"engine.errors", "engine.api.task"}


def test_importing_engine_api_loads_no_runtime() -> None:
    """What every connector author imports must not drag the herder, worker or stores along."""
    probe = "import json, sys, engine.api; print(json.dumps(sorted(m for m in sys.modules if m.startswith('engine'))))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
    )
    runtime = [m for m in loaded if m.split(".")[1:2] and m.split(".")[1] in (*RUNTIME_PACKAGES, "engine")]
    assert "engine.api" in loaded
    assert runtime == []


def test_engine_still_exports_its_runtime_names_on_first_use() -> None:
    probe = "import engine; print(engine.Engine.__module__, engine.DeletionOutcome.__module__)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.split() == ["engine.engine", "engine.herder.deletion"]


def test_at_most_six_modules_stay_loose_in_the_engine_package() -> None:
    loose = sorted(p.name for p in (ROOT / "engine").glob("*.py"))
    assert len(loose) <= 6, loose


def test_every_package_has_an_init() -> None:
    missing = [
        str(d.relative_to(ROOT))
        for top in ("engine", "states")
        for d in [ROOT / top, *(ROOT / top).rglob("*")]
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")) and not (d / "__init__.py").exists()
    ]
    assert missing == []
