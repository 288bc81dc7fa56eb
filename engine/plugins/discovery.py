"""Finding plugins the way Connect's plugin scanner does, so REST can list them and users can name them by alias.

Three sources, merged into one ``PluginRegistry``:

* Python entry points (installed distributions), one group per plugin kind:

  ============================================  ==================================
  group                                         entries (``name = module:Class``)
  ============================================  ==================================
  ``connect_engine.connectors``                 SourceConnector / SinkConnector subclasses
  ``connect_engine.transforms``                 transformations (SMTs)
  ``connect_engine.predicates``                 predicates
  ``connect_engine.converters``                 converters
  ``connect_engine.header_converters``          header converters
  ============================================  ==================================

* ``plugin.path`` (worker config, comma-separated directories) holds plugins, never scripts. A
  plugin there is either

  - a distribution installed into the directory (``pip install --target DIR``, a ``*.dist-info``
    beside its packages): its entry points of the groups above, loaded as installed ones are; the
    packages it brings (its own and its dependencies) are imported only through those, or
  - a package directory (``acme/`` with an ``__init__.py``) that no distribution there owns: it is
    imported and the Connector subclasses it defines are registered (public, concrete classes
    only). Only connectors have base classes so far, so only they are found by scanning.

  Top-level ``.py`` files (and anything else) are never imported: a script left in the directory
  never runs. Each directory is appended to ``sys.path``, so plugin classes stay importable by
  their dotted name. Connect's counterpart is a directory of jars, or of directories of jars,
  each an isolated plugin (``docs/compatibility.md``).
* dotted paths (``package.module.Class``), resolved by ``engine.plugins.loading`` without any scan.

Aliases follow Connect's ``PluginUtils.computeAliases``: the simple class name and the simple
name with the type suffix removed (``RecordingSource`` for ``RecordingSourceConnector``), each
kept only when it names exactly one class. A connector's ``java_class`` (the Java connector it is a
twin of) is one more alias, so configs written by Java Connect name it.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache
from importlib.metadata import Distribution, EntryPoint, distributions, entry_points
from pathlib import Path
from typing import Any

import structlog

from engine.api.connector import Connector, SinkConnector, SourceConnector
from engine.plugins.classes import qualified_name
from engine.plugins.extras import missing_extra

log = structlog.get_logger(component="plugins")


class PluginType(StrEnum):
    """Connect's ``PluginType`` as it appears in PluginInfo's ``type``, in listing order."""

    SINK = "sink"
    SOURCE = "source"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"

    @property
    def suffix(self) -> str:
        """What ``prunedName`` strips: ``Connector`` for connectors, else the base class's name."""
        return _SUFFIXES[self]


_SUFFIXES = {
    PluginType.SINK: "Connector",
    PluginType.SOURCE: "Connector",
    PluginType.TRANSFORMATION: "Transformation",
    PluginType.PREDICATE: "Predicate",
    PluginType.CONVERTER: "Converter",
    PluginType.HEADER_CONVERTER: "HeaderConverter",
}

CONNECTOR_TYPES = frozenset({PluginType.SINK, PluginType.SOURCE})

ENTRY_POINT_GROUPS: dict[str, PluginType | None] = {
    "connect_engine.connectors": None,  # source or sink, decided by the base class
    "connect_engine.transforms": PluginType.TRANSFORMATION,
    "connect_engine.predicates": PluginType.PREDICATE,
    "connect_engine.converters": PluginType.CONVERTER,
    "connect_engine.header_converters": PluginType.HEADER_CONVERTER,
}


def connector_plugin_type(cls: type) -> PluginType | None:
    if issubclass(cls, SinkConnector):
        return PluginType.SINK
    if issubclass(cls, SourceConnector):
        return PluginType.SOURCE
    return None


@cache
def plugin_version(cls: type) -> str | None:
    """``version()`` of a fresh instance when it gives a string; a plugin that fails is still listed."""
    try:
        result: Any = cls().version()
    except Exception as exc:
        log.warning("plugins.version_failed", plugin=qualified_name(cls), error=repr(exc))
        return None
    if inspect.iscoroutine(result):
        result.close()  # listing is synchronous; an async version() leaves the version undefined
        return None
    return result if isinstance(result, str) else None


UNDEFINED_VERSION = "undefined"
CLASSPATH = "classpath"


@dataclass(frozen=True, slots=True)
class PluginDesc:
    """One discovered plugin class and its kind (Connect's ``PluginDesc``).

    ``location`` is where it was found: ``classpath`` for installed distributions, else the
    ``plugin.path`` entry (Connect: ``classpath`` or the plugin's isolated location).
    """

    cls: type
    type: PluginType
    location: str = field(default=CLASSPATH, compare=False)

    @property
    def name(self) -> str:
        return qualified_name(self.cls)

    @property
    def simple_name(self) -> str:
        return self.cls.__name__

    @property
    def pruned_name(self) -> str:
        simple = self.simple_name
        pos = simple.rfind(self.type.suffix)  # Connect: lastIndexOf, and only when not at 0
        return simple[:pos] if pos > 0 else simple

    def java_repr(self) -> str:
        """Connect's ``PluginDesc.toString()``, as its "available connectors are: ..." messages list plugins."""
        version = plugin_version(self.cls) or UNDEFINED_VERSION
        return (
            f"PluginDesc{{klass=class {self.name}, name='{self.name}', version='{version}', "
            f"encodedVersion={version}, type={self.type.value}, typeName='{self.type.value}', "
            f"location='{self.location}'}}"
        )

    def info(self) -> dict[str, str]:
        """Connect's PluginInfo; ``version`` left out when undefined."""
        result = {"class": self.name, "type": self.type.value}
        version = plugin_version(self.cls)
        if version is not None:
            result["version"] = version
        return result


class PluginRegistry:
    """The plugins a worker knows, by full class name and by unambiguous alias."""

    def __init__(self, plugins: Iterable[PluginDesc] = ()) -> None:
        self._plugins: dict[str, PluginDesc] = {}
        for desc in plugins:
            self._plugins.setdefault(desc.name, desc)
        claims: dict[str, set[str]] = {}
        for desc in self._plugins.values():
            for alias in (desc.simple_name, desc.pruned_name, getattr(desc.cls, "java_class", None)):
                if alias:
                    claims.setdefault(alias, set()).add(desc.name)
        self._aliases = {alias: next(iter(names)) for alias, names in claims.items() if len(names) == 1}

    @classmethod
    def discover(cls, plugin_path: str | None = None) -> PluginRegistry:
        """Installed entry points, plus whatever ``plugin_path`` (comma-separated dirs) holds."""
        found = [*_installed_plugins(), *scan_plugin_path(plugin_path)]
        return cls(found)

    def __contains__(self, name: str) -> bool:
        return self.resolve(name) is not None

    def plugins(self, types: Iterable[PluginType] | None = None) -> list[PluginDesc]:
        """Sorted as Connect lists them: by type (sinks, sources, ...), then by class name."""
        wanted = set(PluginType) if types is None else set(types)
        order = list(PluginType)
        chosen = [d for d in self._plugins.values() if d.type in wanted]
        return sorted(chosen, key=lambda d: (order.index(d.type), d.name))

    def infos(self, *, connectors_only: bool = True) -> list[dict[str, str]]:
        return [d.info() for d in self.plugins(CONNECTOR_TYPES if connectors_only else None)]

    def aliases(self) -> dict[str, str]:
        """Alias -> full class name, ambiguous aliases left out."""
        return dict(self._aliases)

    def refresh(self, other: PluginRegistry) -> None:
        """Take ``other``'s plugins in place (a reload: whoever holds this registry sees them)."""
        self._plugins, self._aliases = dict(other._plugins), dict(other._aliases)

    def resolve(self, name: str) -> PluginDesc | None:
        """The plugin ``name`` means: a full class name first, then an unambiguous alias."""
        desc = self._plugins.get(name)
        if desc is None and name in self._aliases:
            desc = self._plugins[self._aliases[name]]
        return desc


# ---- entry points -----------------------------------------------------------------------------


def plugins_from_entry_points(eps: Iterable[EntryPoint]) -> list[PluginDesc]:
    """Load each entry point of our groups; broken ones are logged and skipped, as Connect does."""
    found: list[PluginDesc] = []
    for ep in eps:
        if ep.group not in ENTRY_POINT_GROUPS:
            continue
        try:
            loaded = ep.load()
        except Exception as exc:
            needs = missing_extra(exc)
            if needs is not None:  # a built-in plugin of an extra not installed: silent until it is used
                _needs_extra(ep, *needs)
                continue
            log.warning("plugins.entry_point_failed", group=ep.group, entry_point=ep.value, error=repr(exc))
            continue
        kind = ENTRY_POINT_GROUPS[ep.group]
        if isinstance(loaded, type) and kind is None:
            kind = connector_plugin_type(loaded)
        if not isinstance(loaded, type) or kind is None:
            log.warning(
                "plugins.entry_point_ignored",
                group=ep.group,
                entry_point=ep.value,
                reason="not a class of the group's kind",
            )
            continue
        found.append(PluginDesc(loaded, kind))
        if ep.dist is not None:  # the version this process imported (engine/plugins/reload.py compares)
            LOADED_DISTRIBUTIONS.setdefault(ep.dist.name, ep.dist.version)
    return found


_NEEDING_EXTRAS: dict[str, tuple[str, str]] = {}
"""Plugins whose entry point could not load for want of an extra: each name it goes by -> (module, extra)."""


def _needs_extra(ep: EntryPoint, module: str, extra: str) -> None:
    log.debug("plugins.needs_extra", entry_point=ep.value, module=module, extra=extra)
    dotted = ep.value.replace(":", ".")
    simple = dotted.rpartition(".")[2]
    for name in (ep.name, dotted, simple, simple.removesuffix("Connector")):
        _NEEDING_EXTRAS.setdefault(name, (module, extra))


def extra_needed_by(name: str) -> tuple[str, str] | None:
    """``(module, extra)`` when ``name`` (class name or alias) is a plugin that an extra not installed provides."""
    _installed_plugins()
    return _NEEDING_EXTRAS.get(name.strip())


LOADED_DISTRIBUTIONS: dict[str, str] = {}
"""Distribution name -> the version whose plugins this process loaded."""


def forget_installed() -> None:
    """Read the installed entry points again at the next discovery (a reload: something was installed)."""
    _installed_plugins.cache_clear()
    _forget_process_registry()


@cache
def _installed_plugins() -> tuple[PluginDesc, ...]:
    # installed distributions do not change while the process runs
    eps = [ep for group in ENTRY_POINT_GROUPS for ep in entry_points(group=group)]
    return tuple(plugins_from_entry_points(eps))


# ---- plugin.path ------------------------------------------------------------------------------

_PATH_PLUGINS: dict[str, PluginDesc] = {}
"""Every plugin found on any plugin.path so far: imports are process-wide, so aliases are too."""


def scan_plugin_path(plugin_path: str | None) -> list[PluginDesc]:
    """The plugins in each directory: its distributions' entry points and its packages' connectors."""
    found: list[PluginDesc] = []
    for raw in (plugin_path or "").split(","):
        directory = raw.strip()
        if not directory:
            continue
        if not Path(directory).is_dir():
            log.error("plugins.path_unreadable", path=directory)
            continue
        found.extend(_scan_directory(Path(directory)))
    for desc in found:
        if desc.name not in _PATH_PLUGINS:
            _PATH_PLUGINS[desc.name] = desc
            _forget_process_registry()
    return found


def _scan_directory(directory: Path) -> list[PluginDesc]:
    if str(directory) not in sys.path:
        sys.path.append(str(directory))  # appended: installed packages keep precedence over plugins
    installed = list(distributions(path=[str(directory)]))
    owned = set().union(*(top_level_names(dist) for dist in installed))
    found: list[PluginDesc] = []
    for entry in sorted(directory.iterdir()):
        module_name = _plugin_package(entry)
        if module_name is None:
            if entry.is_file() and entry.suffix == ".py":
                log.info(
                    "plugins.script_ignored",
                    path=str(entry),
                    reason="plugin.path loads packages and distributions, never top-level scripts",
                )
            continue
        if module_name in owned:
            continue  # a distribution's package (or one of its dependencies): reached through entry points
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            log.warning("plugins.module_failed", path=str(entry), error=repr(exc))
            continue
        found.extend(_connectors_defined_in(module_name, vars(module).values(), _location(entry)))
    eps = [ep for dist in installed for ep in dist.entry_points]
    found.extend(replace(desc, location=_location(directory)) for desc in plugins_from_entry_points(eps))
    return found


def top_level_names(dist: Distribution) -> set[str]:
    """The top-level packages and modules a distribution installed (``top_level.txt``, else its RECORD):
    what discovery leaves to entry points and what a reload drops from ``sys.modules``."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return {line.strip() for line in listed.splitlines() if line.strip()}
    names: set[str] = set()
    for file in dist.files or ():
        first = file.parts[0] if file.parts else ""
        if first and not first.endswith((".dist-info", ".egg-info", ".data")) and first != "..":
            names.add(first.removesuffix(".py"))
    return names


def _location(path: Path) -> str:
    """A ``file:`` URL as Java prints one (Connect's isolated plugin location)."""
    return "file:" + str(path.resolve()) + ("/" if path.is_dir() else "")


def _plugin_package(entry: Path) -> str | None:
    """The package name of a plugin directory (``acme/__init__.py``); None for anything else."""
    if entry.name.startswith((".", "_")) or not entry.is_dir() or not (entry / "__init__.py").is_file():
        return None
    return entry.name if entry.name.isidentifier() else None


def _connectors_defined_in(
    module_name: str, members: Iterable[object], location: str
) -> Iterator[PluginDesc]:
    for member in members:
        if not isinstance(member, type) or inspect.isabstract(member) or not issubclass(member, Connector):
            continue
        if member.__name__.startswith("_"):
            continue  # private helpers and bases, as Connect lists only public classes
        if member.__module__ != module_name and not member.__module__.startswith(module_name + "."):
            continue  # imported from elsewhere (our own bases, another plugin)
        kind = connector_plugin_type(member)
        if kind is not None:
            yield PluginDesc(member, kind, location)


def forget_path_plugins(packages: frozenset[str]) -> None:
    """Drop what was found in these top-level packages (their new version is scanned next)."""
    for name in [n for n, d in _PATH_PLUGINS.items() if d.cls.__module__.split(".", 1)[0] in packages]:
        del _PATH_PLUGINS[name]
        _forget_process_registry()


_PROCESS_REGISTRY: list[PluginRegistry] = []  # the one built since the plugins last changed


def _forget_process_registry() -> None:
    _PROCESS_REGISTRY.clear()


def process_registry() -> PluginRegistry:
    """Installed plugins plus everything scanned from any plugin.path so far (for ``connector.class``).

    Built once until the plugins change (a scan finds new ones, a reload forgets some): every
    connector created resolves its class and aliases here, and building it walks every plugin."""
    if not _PROCESS_REGISTRY:
        _PROCESS_REGISTRY.append(PluginRegistry([*_installed_plugins(), *_PATH_PLUGINS.values()]))
    return _PROCESS_REGISTRY[0]
