"""The CI-sized soak (bench/soak.py): a mixed load at `pixgate serve --workers 2` and two
`pixgate worker` processes, while the whole API, single API processes and the workers are
SIGKILLed at random moments and restarted, or stopped with SIGTERM as a supervisor does (which
must end each process within twice its shutdown grace). Nothing acknowledged may be lost, paid
twice or notified twice; the ledger must verify. The long runs and their figures are in
docs/reliability.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests import patroni

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def soak(database_url: str, *args: str) -> str:
    """Run the soak on the test suite's server (it makes a database of its own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env["PIXGATE_BENCH_SERVER"] = urlparse(database_url)._replace(path="/postgres").geturl()
    done = subprocess.run(
        [sys.executable, str(SOAK), "--clients", "8", "--accounts", "3", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


def figure(pattern: str, output: str) -> int:
    match = re.search(pattern, output)
    assert match, f"{pattern!r} not in {output[-2000:]}"
    return int(match.group(1))


def test_nothing_acknowledged_is_lost_while_processes_are_killed(database_url: str) -> None:
    """One run stops the whole API, single API processes and the workers, each by SIGKILL and
    by SIGTERM: the soak takes every (fault, signal) pair once before any pair comes again."""
    output = soak(
        database_url,
        *("--duration", "30", "--faults", "api,api-process,workers", "--kill-every", "3"),
        *("--signal", "KILL,TERM"),
    )
    assert "lost: 0 -> PASS" in output
    assert figure(r"(\d+) acknowledged transactions", output) > 300
    for kind in ("api", "api-process", "worker"):
        for how in ("SIGKILL", "SIGTERM"):
            assert figure(rf"{kind} by {how}: (\d+)", output) >= 1  # the fault really happened
    assert figure(r"(\d+) distinct\s+webhook-ids", output) > 300


@pytest.mark.skipif(not patroni.installed(), reason=patroni.MISSING)
def test_nothing_acknowledged_is_lost_when_the_primary_dies(database_url: str) -> None:
    """The same mixed load on a primary and a synchronous standby run by Patroni: the
    primary's postmaster is SIGKILLed, then its whole node (the standby is promoted, the dead
    node rejoins as the standby), in turns."""
    output = soak(
        database_url,
        *("--ha", "--duration", "45", "--faults", "primary", "--kill-every", "10"),
    )
    assert "lost: 0 -> PASS" in output
    assert figure(r"(\d+) primary kills", output) >= 2  # the postmaster, then the node
    assert figure(r"(\d+) acknowledged transactions", output) > 300
