"""Every shipped scenario file (engine/scenario/builtin/) is a test case."""

from __future__ import annotations

from pathlib import Path

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "engine" / "scenario" / "builtin"
SCENARIO_FILES = sorted(SCENARIO_DIR.glob("*.yaml"))
