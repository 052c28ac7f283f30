"""A pytest plugin (loaded by tests/conftest.py): the run's summary says which tests did not
run because a program they drive is missing on this machine (nginx for tests/deploy/, Chromium
for tests/browser/), so a run without them is not taken for a full one."""

from __future__ import annotations

from collections import Counter

import pytest

MISSING = "is not installed"
"""What the reason of such a skip says (`Debian's nginx is not installed (...)`)."""


def skipped_for_missing_tools(reports: list[pytest.TestReport]) -> Counter[str]:
    """Each such skip's reason, with how many tests it skipped."""
    reasons = (
        str(report.longrepr[2]).removeprefix("Skipped: ")
        for report in reports
        if isinstance(report.longrepr, tuple)
    )
    return Counter(reason for reason in reasons if MISSING in reason)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    missing = skipped_for_missing_tools(terminalreporter.stats.get("skipped", []))
    if missing:
        terminalreporter.section("not run: programs missing on this machine", yellow=True)
        for reason, count in sorted(missing.items()):
            terminalreporter.line(f"{count} tests skipped: {reason}")
