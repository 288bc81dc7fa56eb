"""``.pre-commit-config.yaml`` runs exactly what ``make lint`` runs, so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def lint_recipe() -> list[str]:
    """The Makefile's ``lint`` commands, with ``$(BIN)`` spelled out as the hooks spell it."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, flags=re.MULTILINE)
    assert recipe is not None, "the Makefile has no lint target"
    return [line.strip().replace("$(BIN)/", ".venv/bin/") for line in recipe[1].splitlines()]


def hooks() -> list[dict[str, Any]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def test_the_hooks_run_the_lint_recipe_in_its_order() -> None:
    assert [hook["entry"] for hook in hooks()] == lint_recipe()


def test_each_hook_is_a_local_command_over_the_whole_tree() -> None:
    """Nothing to download (``language: system``), and run as ``make lint`` runs it, not per changed file."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    for hook in hooks():
        assert (hook["language"], hook["pass_filenames"]) == ("system", False), hook["id"]
