"""The scenario files shipped with the package: ``connect-engine replay --list`` and ``builtin:<name>``.

They live at the top of the source tree, in ``scenarios/``; the wheel carries that folder as package
data at ``engine/scenario/scenarios/`` (``force-include`` in ``pyproject.toml``), so a plain ``pip
install`` has them. An editable install maps no package data, so a checkout reads its ``scenarios/``:
``scenario_folder`` is the one place that decides. A name is the file's path under that folder
without ``.yaml`` (``01-pause-and-resume``, ``connectors/rabbitmq-sink-lifecycle``);
``builtin:<pattern>`` takes a glob over those names, whose ``*`` stays within a directory:
``builtin:*`` is the lifecycle scenarios that need no outside server, ``builtin:connectors/*`` the
ones that do.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml

from engine.scenario.model import ScenarioError

PREFIX = "builtin:"
# the folder's name inside ``engine.scenario`` in a wheel (pyproject.toml's force-include)
PACKAGED = "scenarios"


@dataclass(frozen=True, slots=True)
class BuiltinScenario:
    """One shipped scenario: ``name`` is what ``builtin:`` takes, ``title`` the file's ``name:``."""

    name: str
    title: str
    path: Path


def _yaml_files(directory: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in directory.iterdir():
        if entry.is_dir():
            found.extend(_yaml_files(entry, f"{prefix}{entry.name}/"))
        elif entry.name.endswith(".yaml"):
            found.append((prefix + entry.name.removesuffix(".yaml"), entry))
    return found


def scenario_folder() -> Traversable:
    """Where the shipped scenarios are: inside the installed package, else the checkout's ``scenarios/``."""
    packaged = files("engine.scenario") / PACKAGED
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "scenarios"


def builtin_scenarios() -> list[BuiltinScenario]:
    """Every shipped scenario, by name."""
    scenarios = []
    for name, entry in sorted(_yaml_files(scenario_folder())):
        data = yaml.safe_load(entry.read_text(encoding="utf-8"))
        title = data.get("name") if isinstance(data, dict) else None
        scenarios.append(BuiltinScenario(name, str(title or name), Path(str(entry))))
    return scenarios


def resolve(argument: str) -> list[str]:
    """The scenario file paths one ``replay`` argument names: itself, or the shipped files it matches."""
    if not argument.startswith(PREFIX):
        return [argument]
    pattern = argument.removeprefix(PREFIX)
    depth = pattern.count("/")
    matches = [
        str(scenario.path)
        for scenario in builtin_scenarios()
        if scenario.name.count("/") == depth and fnmatchcase(scenario.name, pattern)
    ]
    if not matches:
        raise ScenarioError(
            argument, "no shipped scenario has that name (connect-engine replay --list names them)"
        )
    return matches
