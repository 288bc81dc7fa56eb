"""Pictures of the lifecycle machines (from their declared tables) and of scenario timelines."""

from __future__ import annotations

from engine.diagram.graphviz import GraphvizMissing, dot, render
from engine.diagram.mermaid import mermaid
from engine.diagram.tables import KINDS, edges
from engine.scenario.timeline import timeline_svg

__all__ = ["KINDS", "GraphvizMissing", "dot", "edges", "mermaid", "render", "timeline_svg"]
