"""The documentation's complete programs run exactly as written, in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import doc_block


def _run(program: str, tmp_path: Path) -> list[str]:
    """Run the program as a script (its classes are ``__main__.X``) and return its stdout lines."""
    script = tmp_path / "example.py"
    script.write_text(program)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def _in_order(expected: list[str], lines: list[str]) -> bool:
    """Each expected line appears, in this order (log lines may come between them)."""
    position = 0
    for line in lines:
        if position < len(expected) and line == expected[position]:
            position += 1
    return position == len(expected)


@pytest.mark.timeout(90)
def test_the_readme_embedding_example_runs_as_written(tmp_path: Path) -> None:
    program = doc_block("readme-embedding")
    assert "asyncio.run(main())" in program
    assert len(program.splitlines()) <= 20  # short, as a README example should be
    lines = _run(program, tmp_path)
    assert _in_order(["deleted: True"], lines), lines[-20:]


@pytest.mark.timeout(90)
def test_the_embedding_page_example_prints_what_the_page_says(tmp_path: Path) -> None:
    lines = _run(doc_block("embedding-example"), tmp_path)
    assert _in_order(["PAUSED", "True 0"], lines), lines[-20:]


@pytest.mark.timeout(90)
def test_the_minimal_source_and_sink_move_records_and_clean_up(tmp_path: Path) -> None:
    lines = _run(doc_block("minimal-connectors"), tmp_path)
    numbers = [f'{{"n": {n}}}' for n in range(5)]
    assert _in_order([*numbers, "file after delete: False"], lines), lines[-20:]
