"""Config providers (Kafka's ``ConfigProvider`` / ``ConfigTransformer``, KIP-297).

Connector configs may hold ``${provider:[path:]key}`` references. They are stored raw and
resolved only when a connector or task starts, so secrets never reach the config log.
Worker properties choose the providers::

    config.providers=file,env,dir
    config.providers.file.class=FileConfigProvider          # alias, Java name or dotted path
    config.providers.file.param.allowed.paths=/etc/secrets   # passed to configure()

Unlike Kafka, a reference a known provider cannot satisfy raises ``ConfigError`` instead of
staying unresolved: a connector must not start with the literal ``${env:X}`` as its password.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.config.properties import load_properties
from engine.config.secrets import REVEALED
from engine.errors import ConfigError

# Kafka's ConfigTransformer.DEFAULT_PATTERN: ${provider:path:key} or ${provider:key}
REFERENCE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")

PROVIDERS_KEY = "config.providers"


@dataclass(frozen=True, slots=True)
class ConfigData:
    """What a provider returns for one path; ``ttl_ms`` is kept for reload scheduling (not used yet)."""

    data: dict[str, str]
    ttl_ms: int | None = None


class ConfigProvider(ABC):
    """Base for providers; user classes may also just duck-type ``get`` (and ``configure``)."""

    def configure(self, params: Mapping[str, str]) -> None:  # noqa: B027 - optional hook
        """Receives ``config.providers.<name>.param.*`` with the prefix stripped."""

    @abstractmethod
    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData | Mapping[str, str]:
        """The values at ``path`` (only ``keys`` when given); missing keys are simply absent."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""


class _AllowedPaths:
    """KIP-993's ``allowed.paths``: file and directory providers only read below these roots."""

    def __init__(self, params: Mapping[str, str]) -> None:
        raw = params.get("allowed.paths", "")
        self.roots = [Path(os.path.normpath(p.strip())) for p in raw.split(",") if p.strip()]

    def check(self, path: str) -> Path:
        resolved = Path(os.path.normpath(path))
        if self.roots and not any(resolved == r or r in resolved.parents for r in self.roots):
            raise ConfigError(f"The path {path} is not allowed to be accessed (allowed.paths)")
        return resolved


class _PathConfigProvider(ConfigProvider):
    """A provider reading files, limited to ``allowed.paths`` when configured."""

    def __init__(self) -> None:
        self._allowed = _AllowedPaths({})

    def configure(self, params: Mapping[str, str]) -> None:
        self._allowed = _AllowedPaths(params)


class FileConfigProvider(_PathConfigProvider):
    """``${file:/path/to/x.properties:key}``: a key of a Java properties file."""

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData({})
        props = load_properties(self._allowed.check(path))
        return ConfigData({k: v for k, v in props.items() if keys is None or k in keys})


class EnvVarConfigProvider(ConfigProvider):
    """``${env:VAR}``: an environment variable, if its name matches ``allowlist.pattern``."""

    def __init__(self) -> None:
        self._allow: re.Pattern[str] | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        pattern = params.get("allowlist.pattern")
        self._allow = re.compile(pattern) if pattern else None

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if path:
            raise ConfigError(f"Path is not supported for EnvVarConfigProvider, invalid value '{path}'")
        return ConfigData(
            {
                k: v
                for k, v in os.environ.items()
                if (keys is None or k in keys) and (self._allow is None or self._allow.fullmatch(k))
            }
        )


class DirectoryConfigProvider(_PathConfigProvider):
    """``${dir:/path/to/dir:filename}``: the whole content of a file in a directory (as Kafka, unstripped)."""

    def get(self, path: str, keys: Collection[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData({})
        directory = self._allowed.check(path)
        if not directory.is_dir():
            raise ConfigError(f"Could not read directory {path}: not a directory")
        data: dict[str, str] = {}
        for entry in directory.iterdir():
            if entry.is_file() and (keys is None or entry.name in keys):
                try:
                    data[entry.name] = entry.read_text(encoding="utf-8")
                except OSError as exc:
                    raise ConfigError(f"Could not read file {entry}: {exc.strerror or exc}") from None
        return ConfigData(data)


_BUILT_INS: dict[str, type[ConfigProvider]] = {
    cls.__name__: cls for cls in (FileConfigProvider, EnvVarConfigProvider, DirectoryConfigProvider)
}
_JAVA_PACKAGE = "org.apache.kafka.common.config.provider."
# a provider named file/env/dir with no .class gets the matching built-in
_DEFAULT_FOR_NAME = {"file": FileConfigProvider, "env": EnvVarConfigProvider, "dir": DirectoryConfigProvider}


def _provider_class(name: str, class_name: str | None) -> Any:
    if not class_name:
        default = _DEFAULT_FOR_NAME.get(name)
        if default is None:
            raise ConfigError(f"Config provider '{name}' needs {PROVIDERS_KEY}.{name}.class")
        return default
    short = class_name.removeprefix(_JAVA_PACKAGE)
    if short in _BUILT_INS:
        return _BUILT_INS[short]
    module_name, _, attr = class_name.replace(":", ".").rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(
            f"Invalid config provider class {class_name} for '{name}': {exc}",
            errors={f"{PROVIDERS_KEY}.{name}.class": [str(exc)]},
        ) from None


def _instantiate(name: str, worker: Mapping[str, str]) -> Any:
    prefix = f"{PROVIDERS_KEY}.{name}."
    cls = _provider_class(name, worker.get(prefix + "class"))
    params = {
        k.removeprefix(prefix + "param."): v for k, v in worker.items() if k.startswith(prefix + "param.")
    }
    try:
        provider = cls()
        configure = getattr(provider, "configure", None)
        if configure is not None:
            configure(params)
    except ConfigError:
        raise
    except Exception as exc:  # user code
        raise ConfigError(
            f"Config provider '{name}' could not be set up: {type(exc).__name__}: {exc}"
        ) from None
    if not callable(getattr(provider, "get", None)):
        raise ConfigError(f"Config provider '{name}' ({cls!r}) has no get(path, keys) method")
    return provider


@dataclass(frozen=True, slots=True)
class ConfigTransformer:
    """Resolves references against the worker's providers; unknown providers' references stay as they are."""

    providers: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_worker(cls, worker: Mapping[str, str]) -> ConfigTransformer:
        names = [n.strip() for n in worker.get(PROVIDERS_KEY, "").split(",") if n.strip()]
        return cls({name: _instantiate(name, worker) for name in names})

    def resolve(self, config: Mapping[str, str]) -> dict[str, str]:
        """A copy of ``config`` with every reference to a configured provider replaced.

        Each (provider, path) is asked once, for all its keys. Errors name the config key and
        the reference, never a value.
        """
        wanted: dict[tuple[str, str], set[str]] = {}
        users: dict[tuple[str, str], str] = {}
        for key, value in config.items():
            for m in REFERENCE.finditer(value or ""):
                if m.group(1) in self.providers:
                    where = (m.group(1), m.group(3) or "")
                    wanted.setdefault(where, set()).add(m.group(4))
                    users.setdefault(where, key)
        if not wanted:
            return dict(config)
        found = {where: self._lookup(where, keys, users[where]) for where, keys in wanted.items()}

        def replace(key: str, m: re.Match[str]) -> str:
            if m.group(1) not in self.providers:
                return m.group(0)  # Kafka leaves unknown providers' references untouched
            path = m.group(3) or ""
            value = found[(m.group(1), path)].get(m.group(4))
            if value is None:
                where = f" at '{path}'" if path else ""
                raise ConfigError(
                    f"Could not resolve {m.group(0)} in configuration '{key}': config provider "
                    f"'{m.group(1)}' has no key '{m.group(4)}'{where}",
                    errors={key: ["unresolved reference"]},
                )
            REVEALED.remember(value, m.group(0))  # kept out of traces, logs and answers (secrets.py)
            return value

        return {k: (REFERENCE.sub(functools.partial(replace, k), v) if v else v) for k, v in config.items()}

    def _lookup(self, where: tuple[str, str], keys: set[str], config_key: str) -> Mapping[str, str]:
        name, path = where
        try:
            result = self.providers[name].get(path, frozenset(keys))
        except ConfigError as exc:
            raise ConfigError(
                f"Could not resolve configuration '{config_key}' with config provider '{name}': {exc}",
                errors={config_key: [str(exc)]},
            ) from None
        except Exception as exc:  # user code
            raise ConfigError(
                f"Could not resolve configuration '{config_key}' with config provider "
                f"'{name}': {type(exc).__name__}: {exc}",
                errors={config_key: [str(exc)]},
            ) from None
        return result.data if isinstance(result, ConfigData) else result


def has_references(value: str | None) -> bool:
    return bool(value) and REFERENCE.search(value or "") is not None


def reverse_transform(
    raw_connector_config: Mapping[str, str], task_configs: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Kafka's ``AbstractHerder.reverseTransform``: a task config key that is also a connector-config
    key whose raw value holds a reference gets that raw value back, so no secret is written."""
    raw_keys = {k: v for k, v in raw_connector_config.items() if has_references(v)}
    return [{k: raw_keys.get(k, v) for k, v in config.items()} for config in task_configs]
