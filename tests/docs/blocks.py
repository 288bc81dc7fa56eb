"""The fenced code blocks of README.md and docs/, and the marker each must carry.

Every block is preceded by an HTML comment: ``<!-- fragment -->`` (a piece shown for reading, not
run) or ``<!-- test: NAME -->`` (a test reads the block by NAME with ``doc_block`` and runs or checks
it). ``tests/docs/test_code_blocks.py`` enforces both: no unmarked block, and no NAME that no test
reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(```+|~~~+)")
MARKER = re.compile(r"^<!-- (fragment|test: ([a-z0-9-]+)) -->$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    marker: str | None  # "fragment", "test", or None (unmarked)
    name: str | None
    text: str


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """The top-level fenced blocks of one Markdown page, with the marker on the line before each."""
    found: list[Block] = []
    lines = page.read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index].strip())
        if opening is None:
            index += 1
            continue
        fence, lang = opening.group(1), lines[index].strip()[len(opening.group(1)) :].strip()
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        previous = lines[index - 1].strip() if index else ""
        marked = MARKER.match(previous)
        found.append(
            Block(
                page,
                index + 1,
                lang,
                marked.group(1).split(":")[0] if marked else None,
                marked.group(2) if marked else None,
                "\n".join(lines[index + 1 : end]) + "\n",
            )
        )
        index = end + 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def doc_block(name: str) -> str:
    """The text of the block marked ``<!-- test: NAME -->``, wherever it lives."""
    matches = [block for block in all_blocks() if block.name == name]
    assert len(matches) == 1, (
        f"expected one block named {name!r} in README.md and docs/, found {len(matches)}"
    )
    return matches[0].text


def doc_page(relative: str) -> str:
    """A page of docs/ (or README.md) as text."""
    return (ROOT / relative).read_text()
