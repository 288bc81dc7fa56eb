"""connect-engine: run Kafka Connect-style connectors in asyncio, with deletion callbacks.

The public surface is this module and the modules the documentation sends users to, the table
below; ``PUBLIC_MODULES`` lists them for the code that needs the list (``tests/test_public_api.py``
pins each one's ``__all__`` and checks this table against it; ``docs/gen_reference.py`` gives each a
reference page). Anything else (``engine.herder``, ``engine.worker``, ...) is internal and changes
without notice.

==========================  ====================================================================
module                      for
==========================  ====================================================================
``engine``                  embedding: ``Engine``, what its calls return, the errors they raise
``engine.api``              connector authors: ``Connector``, ``Task``, records, ``ConfigDef``
``engine.data``             Connect's data model: ``Schema``, ``Struct``, logical types
``engine.topics``           the data plane's ``Topics`` protocol and the in-process topics
``engine.spark``            a task's handle on the worker's Spark (``context.spark``)
``engine.testing``          test writers: recording connectors, faults, waits, the pytest plugin
``engine.testing.cluster``  distributed workers as separate processes, for cluster tests
``engine.testing.kafka``    a real Apache Kafka (from Maven Central) for tests
``engine.rest.auth``        REST basic-auth credentials (``python -m engine.rest.auth hash USER``)
==========================  ====================================================================

Importing ``engine`` stays light: the runtime names below resolve on first use (PEP 562), so
``import engine.api`` (what every connector author writes) loads no runtime. Logging stays quiet
until the application configures it (``engine.observability.logs.quiet_until_configured``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# The errors the Engine's calls raise on purpose. Every one is an EngineError, whose http_status is
# what the REST API answers (Connect's status for the same failure).
from engine.errors import (
    ConfigError,
    ConnectorAlreadyExists,
    ConnectorInstantiationError,
    ConnectorNotFound,
    EngineError,
    EngineNotRunning,
    IllegalTransition,
    SettleTimeout,
    StateTimeout,
    TaskNotFound,
)
from engine.observability import logs as _logs

# The runtime: the Engine and the values its calls hand back. Imported for type checkers only; at
# run time __getattr__ loads each from the module named in _LAZY the first time it is asked for.
if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.herder.deletion import DeletionOutcome
    from engine.herder.transition_feed import TransitionEvent

# A library writes nothing to stdout or stderr until the application configures logging.
_logs.quiet_until_configured()

# The modules of the table in the docstring, in its order.
PUBLIC_MODULES: tuple[str, ...] = (
    "engine",
    "engine.api",
    "engine.data",
    "engine.topics",
    "engine.spark",
    "engine.testing",
    "engine.testing.cluster",
    "engine.testing.kafka",
    "engine.rest.auth",
)

_LAZY = {
    "DeletionOutcome": "engine.herder.deletion",
    "Engine": "engine.engine",
    "TransitionEvent": "engine.herder.transition_feed",
}

__all__ = [
    "PUBLIC_MODULES",
    "ConfigError",
    "ConnectorAlreadyExists",
    "ConnectorInstantiationError",
    "ConnectorNotFound",
    "DeletionOutcome",
    "Engine",
    "EngineError",
    "EngineNotRunning",
    "IllegalTransition",
    "SettleTimeout",
    "StateTimeout",
    "TaskNotFound",
    "TransitionEvent",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
