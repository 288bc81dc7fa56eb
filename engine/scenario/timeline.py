"""A scenario's transitions over time as a self-contained SVG: one row per connector and task.

The x axis is the trace's own order (one column per transition), labelled with the step that
caused it and the virtual time, so the picture is as deterministic as the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from engine.scenario.transition_trace import TraceLine

COLOURS = {
    "RUNNING": "#2e9d4f",
    "PAUSED": "#f0a500",
    "STOPPED": "#8a8a8a",
    "FAILED": "#d33a2c",
    "RESTARTING": "#2f6fd6",
    "UNASSIGNED": "#d9d9d9",
    "DESTROYED": "#111111",
}
_COLUMN = 28
_ROW = 26
_LABEL = 170
_TOP = 40
_BAR = 16
_CHAR = 7  # generous width of one label character at font-size 11, so labels never overlap bars


def _unit(line: TraceLine) -> tuple[str, int]:
    return line.connector, -1 if line.task is None else line.task


def _label(unit: tuple[str, int]) -> str:
    connector, task = unit
    return connector if task < 0 else f"{connector} task-{task}"


def timeline_svg(trace: Sequence[TraceLine]) -> str:
    """Draw ``trace`` as SVG text, grid and bars behind the transition dots so every dot stays visible."""
    units = sorted({_unit(line) for line in trace})
    rows = {unit: n for n, unit in enumerate(units)}
    left = max(_LABEL, _CHAR * max((len(_label(unit)) for unit in units), default=0) + 16)
    width = left + _COLUMN * (len(trace) + 1) + 20
    height = _TOP + _ROW * len(units) + 50
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for unit, row in rows.items():
        y = _TOP + row * _ROW
        parts.append(f'<text x="6" y="{y + _BAR - 3}">{escape(_label(unit))}</text>')
    segments: list[str] = []
    markers: list[str] = []
    last: dict[tuple[str, int], tuple[int, str]] = {}
    for column, line in enumerate(trace):
        unit = _unit(line)
        if unit in last and last[unit][1] != "DESTROYED":  # a re-created connector: no bar across the gap
            segments.append(_segment(left, rows[unit], *last[unit], column))
        last[unit] = (column, line.to_state)
        x = left + column * _COLUMN
        y = _TOP + rows[unit] * _ROW
        tip = (
            f"step {line.step}, {line.time:g}s: {_label(unit)} {line.trigger} "
            f"{line.from_state} -> {line.to_state}"
        )
        markers.append(
            f'<circle cx="{x}" cy="{y + _BAR / 2}" r="4" fill="{COLOURS.get(line.to_state, "#999")}" '
            f'stroke="#333"><title>{escape(tip)}</title></circle>'
        )
    for unit, (column, state) in last.items():
        if state != "DESTROYED":
            segments.append(_segment(left, rows[unit], column, state, len(trace)))
    parts += _axis(trace, left, height) + segments + markers  # back to front: grid, bars, dots
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _segment(left: int, row: int, start: int, state: str, end: int) -> str:
    x = left + start * _COLUMN
    y = _TOP + row * _ROW
    return (
        f'<rect x="{x}" y="{y}" width="{(end - start) * _COLUMN}" height="{_BAR}" rx="3" '
        f'fill={quoteattr(COLOURS.get(state, "#999"))} opacity="0.85"><title>{escape(state)}</title></rect>'
    )


def _axis(trace: Sequence[TraceLine], left: int, height: int) -> list[str]:
    parts = []
    shown_step = None
    for column, line in enumerate(trace):
        if line.step == shown_step:
            continue
        shown_step = line.step
        x = left + column * _COLUMN
        parts.append(
            f'<line x1="{x}" y1="{_TOP - 8}" x2="{x}" y2="{height - 36}" stroke="#ccc" '
            'stroke-dasharray="2,3"/>'
        )
        parts.append(f'<text x="{x}" y="{height - 22}" text-anchor="middle">step {line.step}</text>')
        parts.append(f'<text x="{x}" y="{height - 8}" text-anchor="middle" fill="#666">{line.time:g}s</text>')
    parts.append(f'<text x="6" y="{_TOP - 18}" font-weight="bold">transitions by step (virtual time)</text>')
    return parts
