"""Process entry points (Kafka's ``connect/cli``): ``connect-engine`` and its commands.

``main`` parses arguments and hands over to the module of the command: ``standalone``,
``distributed``, ``demo``, ``demo_pipeline`` (``pipeline``) and ``replay_dump``.
"""

from __future__ import annotations

from engine.cli.main import main

__all__ = ["main"]
