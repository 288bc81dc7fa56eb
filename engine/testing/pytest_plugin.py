"""pytest fixtures for testing connectors on an embedded engine (registered as a pytest11 plugin).

``connect_engine``: a started engine on an in-memory log, with short shutdown windows, shut down
after the test. ``connect_engine_factory``: make engines with your own worker config.
``connect_transitions``: a recorder of ``connect_engine``'s transitions, for ``assert_transitions``.
Every fixture starts with an empty ``CALLS`` log and no injected faults.

Needs pytest-asyncio (``pip install connect-engine[testing]``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping

import pytest

from engine.engine import Engine
from engine.testing.faults import FAULTS
from engine.testing.recording import CALLS
from engine.testing.transitions import TransitionRecorder

# The plugin loads in any pytest run where the package is installed; only its async fixtures
# need pytest-asyncio, so without it they are simply not defined.
HAS_PYTEST_ASYNCIO = importlib.util.find_spec("pytest_asyncio") is not None

# A hung callback should cost a test a second, not the production defaults' 5-30 s.
TEST_WORKER_CONFIG = {
    "task.shutdown.graceful.timeout.ms": "1000",
    "connector.shutdown.graceful.timeout.ms": "1000",
    "connector.deleted.timeout.ms": "2000",
}

EngineFactory = Callable[[Mapping[str, str] | None], Awaitable[Engine]]


@pytest.fixture
def clean_test_kit() -> Iterator[None]:
    """Empty call log and no faults before and after the test."""
    CALLS.clear()
    FAULTS.reset()
    yield
    FAULTS.reset()


if HAS_PYTEST_ASYNCIO:
    import pytest_asyncio

    @pytest_asyncio.fixture(loop_scope="function")  # the test's own loop, whatever the project's default
    async def connect_engine_factory(clean_test_kit: None) -> AsyncIterator[EngineFactory]:
        """``await connect_engine_factory({...})``: a started engine (test defaults + your config)."""
        engines: list[Engine] = []

        async def make(worker_config: Mapping[str, str] | None = None) -> Engine:
            engine = Engine({**TEST_WORKER_CONFIG, **(worker_config or {})})
            engines.append(engine)
            await engine.start()
            return engine

        try:
            yield make
        finally:
            FAULTS.release_all()
            errors: list[BaseException] = []
            for engine in reversed(engines):  # every engine is shut down, even if one fails to
                try:
                    await engine.shutdown()
                except Exception as exc:
                    errors.append(exc)
            if errors:
                raise errors[0]

    @pytest_asyncio.fixture(loop_scope="function")  # the test's own loop, whatever the project's default
    async def connect_engine(connect_engine_factory: EngineFactory) -> Engine:
        """A started engine on an in-memory config log."""
        return await connect_engine_factory(None)

    @pytest_asyncio.fixture(loop_scope="function")  # the test's own loop, whatever the project's default
    async def connect_transitions(connect_engine: Engine) -> TransitionRecorder:
        """Every transition ``connect_engine`` makes from now on."""
        return TransitionRecorder(connect_engine.transitions())

    _LOOP_SCOPE = "asyncio_default_fixture_loop_scope"
    # pytest-asyncio >= 1.0: "each async fixture's loop is its own scope's", what the unset option means
    _MATCH_FIXTURE_SCOPE: str | None = getattr(pytest_asyncio.plugin, "_MATCH_FIXTURE_SCOPE", None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(config: pytest.Config) -> None:
        """A project that installs ``connect-engine[testing]`` and sets nothing gets no deprecation
        warning for pytest-asyncio's unset ``asyncio_default_fixture_loop_scope`` at every run: unset,
        it is set to what unset means (each async fixture's loop has the fixture's scope), so no
        fixture's behaviour changes; a project that sets it keeps its value."""
        if _MATCH_FIXTURE_SCOPE is None or config.getini(_LOOP_SCOPE):
            return
        cache = getattr(config, "_inicache", None)  # getini's cache: what pytest-asyncio reads next
        if isinstance(cache, dict):
            cache[_LOOP_SCOPE] = _MATCH_FIXTURE_SCOPE
