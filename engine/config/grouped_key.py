"""``grouped_key``: a ``ConfigKey`` placed in a ConfigDef group, written positionally.

The built-in ConfigDefs (the connector's common keys, the error-handling keys) are long tables of
keys in groups; this is the one row shape they share.
"""

from __future__ import annotations

from typing import Any

from engine.api.config_def import ConfigKey, ConfigType, Importance, Width


def grouped_key(
    order: int,
    name: str,
    type_: ConfigType,
    default: Any,
    importance: Importance,
    doc: str,
    display: str,
    *,
    group: str,
    validator: Any = None,
    width: Width = Width.SHORT,
) -> ConfigKey:
    """The ``order``-th key of ``group``, as Connect's ``ConfigDef.define`` overloads take it."""
    return ConfigKey(
        name=name,
        type=type_,
        default=default,
        validator=validator,
        importance=importance,
        documentation=doc,
        group=group,
        order_in_group=order,
        width=width,
        display_name=display,
    )
