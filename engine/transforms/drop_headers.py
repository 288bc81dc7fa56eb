"""``DropHeaders``: removes the headers with the configured names from each record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.config_def import ConfigDef, ConfigType, Importance, ValidList
from engine.api.records import ConnectRecord
from engine.api.transforms import Transformation

__all__ = ["DropHeaders"]


class DropHeaders(Transformation[ConnectRecord]):
    """Keeps every header whose key is not listed in ``headers`` (all of its occurrences go)."""

    OVERVIEW_DOC = "Removes one or more headers from each record."
    HEADERS_FIELD = "headers"
    CONFIG_DEF = ConfigDef().define(
        HEADERS_FIELD,
        ConfigType.LIST,
        validator=ValidList.any_non_duplicate_values(False, False),  # KIP-1161 (4.2)
        importance=Importance.HIGH,
        documentation="The name of the headers to be removed.",
    )

    def __init__(self) -> None:
        self.headers: frozenset[str] = frozenset()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.headers = frozenset(self.CONFIG_DEF.parse(configs)[self.HEADERS_FIELD])

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        kept = tuple(h for h in record.headers if h.key not in self.headers)
        return record.new_record(headers=kept)
