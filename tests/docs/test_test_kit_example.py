"""The test-kit example of docs/connectors/testing.md runs as written, in a fresh pytest process with the plugin."""

from __future__ import annotations

import pytest

from tests.docs.blocks import doc_block

pytest_plugins = ["pytester"]


def kit_example() -> str:
    return doc_block("test-kit-example")


def test_the_test_kit_example_is_about_ten_lines() -> None:
    assert len(kit_example().strip().splitlines()) <= 12


def test_the_test_kit_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=kit_example())
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    result.assert_outcomes(passed=1)


def test_a_wrong_expectation_in_the_example_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=kit_example().replace('-> PAUSED"]', '-> STOPPED"]'))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    result.assert_outcomes(failed=1)
