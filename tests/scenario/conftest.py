"""Every shipped scenario file (scenarios/ at the top) is a test case."""

from __future__ import annotations

from pathlib import Path

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios"
SCENARIO_FILES = sorted(SCENARIO_DIR.glob("*.yaml"))
