"""The optional extras (``pip install 'connect-engine[postgres]'``) and what to tell a user who lacks one.

A base install ships every built-in connector, but some need a library only an extra brings
(``psycopg``: ``postgres``, ``aio_pika``: ``rabbitmq``, ``pyspark``: ``spark``). Such a connector
stays silent until it is used; then the error names the command that installs what is missing.
The mapping is read from this distribution's own metadata (``Requires-Dist: ...; extra == "x"``),
so it follows ``pyproject.toml``.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.metadata import PackageNotFoundError, requires

DISTRIBUTION = "connect-engine"
_REQUIREMENT = re.compile(r"""^\s*([A-Za-z0-9][A-Za-z0-9._-]*).*;.*extra\s*==\s*["']([^"']+)["']""")
_NOT_FOR_USERS = frozenset({"dev", "testing"})


def _module_name(requirement: str) -> str:
    """The import name a requirement usually gives (``aio-pika`` -> ``aio_pika``)."""
    return re.sub(r"[-.]+", "_", requirement).lower()


@cache
def extras_by_module() -> dict[str, str]:
    """Top-level module -> the extra that installs it, e.g. ``{"psycopg": "postgres"}``."""
    try:
        lines = requires(DISTRIBUTION) or []
    except PackageNotFoundError:  # running from a source tree that was never installed
        return {}
    found: dict[str, str] = {}
    for line in lines:
        match = _REQUIREMENT.match(line)
        if match is not None and match.group(2) not in _NOT_FOR_USERS:
            found.setdefault(_module_name(match.group(1)), match.group(2))
    return found


def missing_extra(error: BaseException) -> tuple[str, str] | None:
    """``(module, extra)`` when ``error`` is an import of a module one of our extras installs, else None."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    module = error.name.partition(".")[0]
    extra = extras_by_module().get(module.lower())
    return None if extra is None else (module, extra)


def install_hint(module: str, extra: str) -> str:
    return f"it needs {module}, which is not installed: pip install '{DISTRIBUTION}[{extra}]'"
