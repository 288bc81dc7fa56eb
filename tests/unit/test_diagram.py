"""Diagrams come from the declared tables (so they cannot drift); timelines are valid, escaped SVG."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from engine.diagram import GraphvizMissing, dot, edges, mermaid, render, timeline_svg
from engine.scenario.trace import TraceLine
from states.connector import CONNECTOR_TRANSITIONS
from states.task import TASK_TRANSITIONS

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """main() configures structlog for a program; later tests expect the defaults back."""
    yield
    structlog.reset_defaults()


def table_edges(table: list[dict[str, object]]) -> set[tuple[str, str, str]]:
    found = set()
    for row in table:
        sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
        found |= {(str(s), str(row["dest"]), str(row["trigger"])) for s in sources}
    return found


@pytest.mark.parametrize(("kind", "table"), [("connector", CONNECTOR_TRANSITIONS), ("task", TASK_TRANSITIONS)])
def test_every_table_edge_is_drawn_in_mermaid_and_dot(kind: str, table: list[dict[str, object]]) -> None:
    drawn = {(s, d, t) for s, d, triggers in edges(kind) for t in triggers}
    assert drawn == table_edges(table)
    text, graph = mermaid(kind), dot(kind)
    assert text.startswith("stateDiagram-v2\n    [*] --> UNASSIGNED\n")
    assert text.rstrip().endswith("DESTROYED --> [*]")
    for source, dest, triggers in edges(kind):
        assert f"    {source} --> {dest}: {', '.join(triggers)}\n" in text
        assert f'    {source} -> {dest} [label="{", ".join(triggers)}"];\n' in graph


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="valid kinds: connector, task"):
        mermaid("worker")


def test_render_with_graphviz_or_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "connector.svg"
    if shutil.which("dot") is None:
        with pytest.raises(GraphvizMissing, match="apt install graphviz"):
            render("connector", target, "svg")
        assert not target.exists()
    else:
        render("connector", target, "svg")
        assert ET.parse(target).getroot().tag == f"{SVG}svg"


def test_cli_prints_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagram", "task"]) == 0
    assert "RUNNING --> PAUSED: pause" in capsys.readouterr().out


def line(step: int, connector: str, task: int | None, trigger: str, frm: str, to: str) -> TraceLine:
    return TraceLine(0.0, step, connector, task, trigger, frm, to)


TRACE = [
    line(1, 'a<b&"c"', None, "start", "UNASSIGNED", "RUNNING"),
    line(1, 'a<b&"c"', 0, "start", "UNASSIGNED", "RUNNING"),
    line(2, 'a<b&"c"', 0, "fail", "RUNNING", "FAILED"),
    line(3, 'a<b&"c"', 0, "destroy", "FAILED", "DESTROYED"),
    line(3, 'a<b&"c"', None, "destroy", "RUNNING", "DESTROYED"),
]


def test_timeline_is_valid_escaped_svg_with_a_row_per_unit() -> None:
    svg = timeline_svg(TRACE)
    root = ET.fromstring(svg)
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert 'a<b&"c"' in labels
    assert 'a<b&"c" task-0' in labels
    assert [t for t in labels if t and t.startswith("step")] == ["step 1", "step 2", "step 3"]
    failed = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#d33a2c"]
    assert len(failed) == 1  # the task's FAILED stretch, red
    assert timeline_svg(TRACE) == svg  # deterministic


def test_replay_writes_a_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "01-pause-and-resume.yaml"
    target = tmp_path / "timeline.svg"
    assert main(["replay", "--timeline", str(target), str(scenario)]) == 0
    assert ET.parse(target).getroot().tag == f"{SVG}svg"


@pytest.mark.parametrize("kind", ["connector", "task"])
def test_the_readme_shows_the_current_diagrams(kind: str) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"```mermaid\n{mermaid(kind)}```" in readme
