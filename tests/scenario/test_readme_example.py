"""The README's test-kit example runs as written, in a fresh pytest process with the plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"

pytest_plugins = ["pytester"]


def readme_example() -> str:
    match = re.search(r"<!-- test-kit-example -->\n```python\n(.*?)```", README.read_text(), re.S)
    assert match is not None, "the README lost its test-kit example"
    return match.group(1)


def test_the_readme_example_is_about_ten_lines() -> None:
    assert len(readme_example().strip().splitlines()) <= 12


def test_the_readme_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=readme_example())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result.assert_outcomes(passed=1)


def test_a_wrong_expectation_in_the_example_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=readme_example().replace("-> PAUSED\"]", "-> STOPPED\"]"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result.assert_outcomes(failed=1)
