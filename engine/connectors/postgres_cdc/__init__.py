"""The PostgreSQL CDC source: row changes from logical decoding (``pgoutput``), through a slot it
provisions on start and drops when deleted."""

from __future__ import annotations

from engine.connectors.postgres_cdc.connector import PostgresCdcSourceConnector
from engine.connectors.postgres_cdc.task import PostgresCdcSourceTask

__all__ = ["PostgresCdcSourceConnector", "PostgresCdcSourceTask"]
