"""Classes by name and back: the one ``import_class`` every loader uses, and ``qualified_name``.

Connect loads every plugin with ``Class.forName``; here a name is ``package.module.Class`` or
``package.module:Class``. Nested classes work as their ``__qualname__`` reads
(``engine.transforms.cast.Cast.Value`` or ``engine.transforms.cast:Cast.Value``), and Java's
binary form ``Cast$Value`` is accepted too. Callers word their own errors (a bad
``connector.class`` and a bad ``key.converter`` read differently in Connect), so a failure says
why in a ``ClassNotFound`` rather than in a message.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal, overload

__all__ = ["ClassNotFound", "import_class", "qualified_name"]


class ClassNotFound(Exception):
    """``name`` named no class.

    ``module`` is the module the name points into (``None`` when the name has no module part),
    and ``error`` what importing it raised, if it did not import.
    """

    def __init__(self, name: str, module: str | None = None, error: BaseException | None = None) -> None:
        super().__init__(
            f"No class {name}"
            + (f": module {module!r} cannot be imported ({error!r})" if error is not None else "")
        )
        self.name = name
        self.module = module
        self.error = error


def qualified_name(cls: type) -> str:
    """``module.Qualname``: the name ``import_class`` reads back, and what plugin listings show."""
    return f"{cls.__module__}.{cls.__qualname__}"


@overload
def import_class(name: str, *, strict: Literal[False] = False) -> type | None: ...


@overload
def import_class(name: str, *, strict: Literal[True]) -> type: ...


def import_class(name: str, *, strict: bool = False) -> type | None:
    """The class ``name`` names, or ``None`` (``ClassNotFound`` with ``strict``, to tell why).

    Without ``:`` the longest importable module prefix is taken and the rest walked as
    attributes. A module that fails on import (or exits) is a failure, never a crash.
    """
    try:
        return _import(name)
    except ClassNotFound:
        if strict:
            raise
        return None


def _import(name: str) -> type:
    dotted = name.replace(":", ".").replace("$", ".")
    module_name, _, attr = dotted.rpartition(".")
    if not module_name or not attr:
        raise ClassNotFound(name)  # no module part: not a dotted name at all
    if ":" in name:
        module_name, _, qualname = name.partition(":")
        candidates = [(module_name, qualname.replace("$", "."))]
    else:  # longest module prefix first: the class may be nested (``module.Outer.Inner``)
        parts = dotted.split(".")
        candidates = [(".".join(parts[:i]), ".".join(parts[i:])) for i in range(len(parts) - 1, 0, -1)]
        candidates = [(prefix, rest) for prefix, rest in candidates if prefix and rest]
    first: ClassNotFound | None = None  # why the longest module failed: the best explanation of a typo
    for prefix, rest in candidates:
        try:
            module = importlib.import_module(prefix)
        except ModuleNotFoundError as exc:
            if exc.name is not None and prefix != exc.name and not prefix.startswith(exc.name + "."):
                raise ClassNotFound(name, prefix, exc) from exc  # it exists but imports something missing
            first = first or ClassNotFound(name, prefix, exc)
            continue  # no such module: try a shorter prefix
        except (Exception, SystemExit) as exc:
            raise ClassNotFound(name, prefix, exc) from exc
        found: Any = module
        for attr in rest.split("."):
            found = getattr(found, attr, None)
            if found is None:
                break
        if isinstance(found, type):
            return found
        raise first or ClassNotFound(name, prefix)
    raise first or ClassNotFound(name)  # every prefix failed to import
