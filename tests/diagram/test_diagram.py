"""Diagrams come from the declared tables (so they cannot drift); timelines are valid, escaped SVG."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from engine.cli import main
from engine.diagram import GraphvizMissing, dot, edges, mermaid, render
from engine.errors import EngineError
from engine.scenario.timeline import timeline_svg
from engine.scenario.transition_trace import TraceLine
from states.connector import CONNECTOR_TRANSITIONS
from states.task import TASK_TRANSITIONS
from tests.docs.blocks import doc_block
from tests.scenario.conftest import SCENARIO_DIR

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


@pytest.mark.parametrize(
    ("kind", "table"), [("connector", CONNECTOR_TRANSITIONS), ("task", TASK_TRANSITIONS)]
)
def test_every_table_edge_is_drawn_in_mermaid_and_dot(kind: str, table: list[dict[str, object]]) -> None:
    drawn = {(s, d, t) for s, d, triggers in edges(kind) for t in triggers}
    assert drawn == table_edges(table)
    text, graph = mermaid(kind), dot(kind)
    assert text.startswith("stateDiagram-v2\n    [*] --> UNASSIGNED\n")
    assert text.rstrip().endswith("DESTROYED --> [*]")
    for source, dest, triggers in edges(kind):
        assert f"    {source} --> {dest}: {', '.join(triggers)}\n" in text
        assert f'    {source} -> {dest} [label="{", ".join(triggers)}"];\n' in graph


@pytest.mark.parametrize("draw", [mermaid, dot])
def test_unknown_kind(draw: Callable[[str], str]) -> None:
    with pytest.raises(ValueError, match="valid kinds: connector, task"):
        draw("worker")


@pytest.mark.parametrize(("fmt", "magic"), [("svg", b"<?xml"), ("png", b"\x89PNG\r\n\x1a\n")])
def test_render_with_graphviz_or_a_clear_error(tmp_path: Path, fmt: str, magic: bytes) -> None:
    target = tmp_path / f"connector.{fmt}"
    if shutil.which("dot") is None:
        with pytest.raises(GraphvizMissing, match="apt install graphviz"):
            render("connector", target, fmt)
        assert not target.exists()
    else:
        render("connector", target, fmt)
        assert target.read_bytes().startswith(magic)
        if fmt == "svg":
            assert ET.parse(target).getroot().tag == f"{SVG}svg"


def test_render_without_graphviz_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.diagram.shutil.which", lambda _name: None)
    with pytest.raises(GraphvizMissing, match="apt install graphviz") as caught:
        render("task", tmp_path / "task.svg", "svg")
    assert isinstance(caught.value, EngineError)
    assert not (tmp_path / "task.svg").exists()


def test_render_checks_its_arguments_before_looking_for_graphviz(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.diagram.shutil.which", lambda _name: None)
    with pytest.raises(ValueError, match="valid formats: svg, png"):
        render("task", tmp_path / "task.pdf", "pdf")
    with pytest.raises(ValueError, match="valid kinds"):
        render("worker", tmp_path / "worker.svg", "svg")


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
    assert timeline_svg(list(TRACE)) == svg


def test_timeline_escapes_names_and_keeps_triggers_in_tooltips() -> None:
    svg = timeline_svg(TRACE)
    assert "a<b" not in svg
    assert "a&lt;b&amp;" in svg
    tips = [t.text or "" for c in ET.fromstring(svg).iter(f"{SVG}circle") for t in c.iter(f"{SVG}title")]
    assert len(tips) == len(TRACE)
    assert 'step 2, 0s: a<b&"c" task-0 fail RUNNING -> FAILED' in tips


def test_timeline_marks_destruction_in_black_above_the_segments() -> None:
    root = ET.fromstring(timeline_svg(TRACE))
    shapes = [el.tag.removeprefix(SVG) for el in root if el.tag in (f"{SVG}rect", f"{SVG}circle")]
    assert "rect" not in shapes[shapes.index("circle") :]  # dots are painted over the bars
    black = [c for c in root.iter(f"{SVG}circle") if c.get("fill") == "#111111"]
    assert len(black) == 2  # the task's and the connector's DESTROYED
    assert not [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#111111"]


def test_timeline_label_column_fits_long_names() -> None:
    name = "a-rather-long-connector-name-" * 3
    root = ET.fromstring(timeline_svg([line(1, name, 12, "start", "UNASSIGNED", "RUNNING")]))
    first_dot = next(root.iter(f"{SVG}circle"))
    assert float(first_dot.get("cx", 0)) > 7 * len(f"{name} task-12")


def test_empty_timeline_is_still_an_svg() -> None:
    assert ET.fromstring(timeline_svg([])).tag == f"{SVG}svg"


def test_replay_writes_a_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = SCENARIO_DIR / "01-pause-and-resume.yaml"
    target = tmp_path / "timeline.svg"
    assert main(["replay", "--timeline", str(target), str(scenario)]) == 0
    assert ET.parse(target).getroot().tag == f"{SVG}svg"


@pytest.mark.parametrize("kind", ["connector", "task"])
def test_the_docs_show_the_current_diagrams(kind: str) -> None:
    shown = {"connector": doc_block("connector-diagram"), "task": doc_block("task-diagram")}
    assert shown[kind] == mermaid(kind)
