"""Where a docs page first names a test broker (noida, tansu), it says what it is or links to where
the docs do: a reader meeting "noida" should not have to search the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
DEFINED = "the-test-brokers"


@pytest.mark.parametrize("broker", ["noida", "tansu"])
def test_the_first_mention_on_each_page_explains_or_links(broker: str) -> None:
    unexplained = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        first = re.search(rf"\b{broker}\b", text, re.IGNORECASE)
        if first is None:
            continue
        around = text[max(0, first.start() - 200) : first.end() + 200]
        if DEFINED not in around and f"**{broker}**" not in around:
            unexplained.append(
                f"{page.relative_to(DOCS)}: ...{text[first.start() - 60 : first.end() + 60]}..."
            )
    assert not unexplained, "\n".join(unexplained)
