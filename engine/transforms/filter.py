"""``Filter``: drops every record. Meant to be used with a predicate (``transforms.<a>.predicate``),
so that only the records matching (or, with ``negate``, not matching) it are dropped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import ConfigDef
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation

__all__ = ["Filter"]


class Filter(Transformation[ConnectRecord]):
    """Returns None for every record, which ends the chain and drops the record."""

    OVERVIEW_DOC = (
        "Drops all records, filtering them from subsequent transformations in the chain. "
        "This is intended to be used conditionally to filter out records matching (or not matching) "
        "a particular Predicate."
    )
    CONFIG_DEF = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def apply(self, record: ConnectRecord) -> None:
        return None
