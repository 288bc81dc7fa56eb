"""Seeing plugins installed since the worker started, without a restart (``POST /connector-plugins/reload``,
``Engine.reload_plugins``).

A plugin is a distribution (its ``connect_engine.*`` entry points, installed into the environment or
into a ``plugin.path`` directory) or a package in a ``plugin.path`` directory. A reload:

1. forgets Python's import caches, so files installed since are found;
2. for each distribution whose installed version differs from the one this process loaded, asks
   which connectors running here use its packages (``in_use``): if none, its modules are dropped
   so the new version is imported; if some do, nothing is dropped (a running connector never has
   its code swapped underneath it) and the distribution is reported as ``restart_required`` with
   those connectors;
3. discovers everything again (entry points, ``plugin.path``) and clears the class caches, so a
   config update (or a new connector) naming a new plugin, or a plugin whose new version was
   loaded, gets it.

One version of a package per process: Python keeps one module per name, so two versions of one
distribution cannot run side by side; connectors move to a new version once none runs the old one
here (stop them, reload, resume them), or at the worker's next restart. Connect's KIP-891 keeps versions
side by side in isolated class loaders; see docs/compatibility.md.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import Distribution, distributions
from pathlib import Path
from typing import Any

import structlog

from engine.plugins import discovery
from engine.plugins.discovery import ENTRY_POINT_GROUPS, PluginDesc, PluginRegistry
from engine.plugins.loading import load_connector_class

log = structlog.get_logger(component="plugins")

OWN_DISTRIBUTION = "connect-engine"  # the engine's built-in plugins are part of the engine: never dropped

InUse = Callable[[frozenset[str]], list[str]]
"""Given top-level package names, the connectors running in this process whose config names a class
from them (a STOPPED or FAILED connector has no live instance: its next start imports afresh)."""


@dataclass
class ReloadResult:
    """What a reload found; ``json()`` is the REST answer."""

    registry: PluginRegistry
    added: list[PluginDesc] = field(default_factory=list)
    removed: list[PluginDesc] = field(default_factory=list)
    upgraded: list[dict[str, str]] = field(default_factory=list)
    restart_required: list[dict[str, Any]] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        return {
            "added": [d.info() for d in self.added],
            "removed": [d.info() for d in self.removed],
            "upgraded": self.upgraded,
            "restart_required": self.restart_required,
        }


def reload_plugins(
    plugin_path: str | None, in_use: InUse, before: PluginRegistry | None = None
) -> ReloadResult:
    """Rediscover plugins; see the module docstring. ``before``: the registry to compare with."""
    previous = before if before is not None else discovery.process_registry()
    importlib.invalidate_caches()
    upgraded, restart_required = _settle_versions(plugin_path, in_use)
    discovery.forget_installed()
    registry = PluginRegistry.discover(plugin_path)
    load_connector_class.cache_clear()
    discovery.plugin_version.cache_clear()
    old = {d.name: d for d in previous.plugins()}
    new = {d.name: d for d in registry.plugins()}
    result = ReloadResult(
        registry,
        [d for n, d in new.items() if n not in old],
        [d for n, d in old.items() if n not in new],
        upgraded,
        restart_required,
    )
    log.info(
        "plugins.reloaded",
        added=[d.name for d in result.added],
        removed=[d.name for d in result.removed],
        upgraded=[u["distribution"] for u in upgraded],
        restart_required=[r["distribution"] for r in restart_required],
    )
    return result


def _settle_versions(
    plugin_path: str | None, in_use: InUse
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    upgraded: list[dict[str, str]] = []
    restart_required: list[dict[str, Any]] = []
    for dist in _plugin_distributions(plugin_path):
        name = dist.name
        loaded = discovery.LOADED_DISTRIBUTIONS.get(name)
        if loaded is None or loaded == dist.version or name == OWN_DISTRIBUTION:
            continue
        packages = frozenset(discovery.top_level_names(dist))
        users = in_use(packages)
        if users:
            restart_required.append(
                {
                    "distribution": name,
                    "loaded_version": loaded,
                    "installed_version": dist.version,
                    "used_by": sorted(users),
                }
            )
            continue
        _drop_modules(packages)
        discovery.forget_path_plugins(packages)
        del discovery.LOADED_DISTRIBUTIONS[name]  # recorded again when the new version loads
        upgraded.append({"distribution": name, "from_version": loaded, "to_version": dist.version})
    return upgraded, restart_required


def _plugin_distributions(plugin_path: str | None) -> Iterable[Distribution]:
    """Installed distributions, then each plugin.path directory's, that have entry points of ours."""
    paths: list[list[str] | None] = [None]
    paths += [[d.strip()] for d in (plugin_path or "").split(",") if d.strip() and Path(d.strip()).is_dir()]
    seen: set[str] = set()  # a plugin.path directory is on sys.path too: each distribution once
    for path in paths:
        for dist in distributions() if path is None else distributions(path=path):
            if dist.name not in seen and any(ep.group in ENTRY_POINT_GROUPS for ep in dist.entry_points):
                seen.add(dist.name)
                yield dist


def _drop_modules(packages: frozenset[str]) -> None:
    for module in [m for m in sys.modules if m.split(".", 1)[0] in packages]:
        del sys.modules[module]


def module_root(cls: type) -> str:
    return cls.__module__.split(".", 1)[0]


def _class_root(value: str) -> str | None:
    """The top-level package of the class a config value names (full name or registered alias)."""
    desc = discovery.process_registry().resolve(value.strip())
    if desc is not None:
        return module_root(desc.cls)
    dotted = value.strip().replace(":", ".")
    return dotted.split(".", 1)[0] if "." in dotted else None


def _names_a_class(key: str) -> bool:
    return key == "connector.class" or key.endswith((".converter", ".type"))


def connectors_using(configs: dict[str, dict[str, str]], packages: frozenset[str]) -> list[str]:
    """Connectors whose config names a class (connector, converter, SMT, predicate) from ``packages``."""
    return [
        name
        for name, config in configs.items()
        if any(_names_a_class(k) and _class_root(v) in packages for k, v in config.items())
    ]
