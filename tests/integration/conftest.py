"""One broker of each kind per test session; every integration test runs against both."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.integration.brokers import BROKERS, Broker, running_broker


@pytest.fixture(scope="session", params=BROKERS)
def broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """A running broker; a missing binary or a failed start errors the tests (never a skip)."""
    with running_broker(request.param) as started:
        yield started


@pytest.fixture
def topic() -> str:
    """A topic name no other test uses."""
    return f"connect-configs-{uuid.uuid4().hex[:12]}"
