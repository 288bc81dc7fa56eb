"""Every fenced code block in README.md and docs/ is either run by a test or marked a fragment."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import ROOT, all_blocks

TESTS = Path(__file__).resolve().parents[1]


def _names_read_by_tests() -> set[str]:
    names: set[str] = set()
    for path in TESTS.rglob("*.py"):
        names.update(re.findall(r"""doc_block\(\s*["']([a-z0-9-]+)["']""", path.read_text()))
    return names


def test_every_block_is_marked() -> None:
    unmarked = [
        f"{block.page.relative_to(ROOT)}:{block.line}" for block in all_blocks() if block.marker is None
    ]
    assert not unmarked, (
        "code blocks without <!-- fragment --> or <!-- test: NAME --> on the line before: "
        + ", ".join(unmarked)
    )


def test_every_named_block_is_read_by_a_test() -> None:
    named = [block.name for block in all_blocks() if block.marker == "test" and block.name is not None]
    assert len(named) == len(set(named)), f"a block name is used twice: {sorted(named)}"
    missing = set(named) - _names_read_by_tests()
    assert not missing, f"blocks marked as tested but read by no test (doc_block(NAME)): {sorted(missing)}"


def test_the_block_finder_sees_the_pages() -> None:
    blocks = all_blocks()
    assert len(blocks) > 20
    assert any(block.name == "readme-embedding" for block in blocks)
