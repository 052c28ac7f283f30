"""The run's summary names the tests skipped for a missing program (tests/missing_tools.py)."""

from __future__ import annotations

import pytest

SKIPPING = """
import pytest

no_nginx = pytest.mark.skipif(True, reason="Debian's nginx is not installed (apt-get install)")


@no_nginx
def test_front_one():
    pass


@no_nginx
def test_front_two():
    pass


@pytest.mark.skip(reason="not for today")
def test_other():
    pass


def test_runs():
    pass
"""


def test_the_summary_counts_the_tests_a_missing_program_skipped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_skipping=SKIPPING)
    result = pytester.runpytest("-p", "no:asyncio", "-p", "tests.missing_tools")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(
        [
            "*not run: programs missing on this machine*",
            "2 tests skipped: Debian's nginx is not installed (apt-get install)",
        ]
    )
    result.stdout.no_fnmatch_line("*not for today*")


def test_a_run_missing_nothing_has_no_such_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_runs():\n    pass\n")
    result = pytester.runpytest("-p", "no:asyncio", "-p", "tests.missing_tools")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*programs missing*")
