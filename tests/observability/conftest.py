"""The REST fixtures: metrics and log levels are read and changed over a worker's REST API."""

from tests.rest.conftest import client, engine

__all__ = ["client", "engine"]
