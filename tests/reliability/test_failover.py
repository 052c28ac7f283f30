"""The primary dies under load and Patroni promotes the standby: the gateway finds the new
primary by itself through its multi-host URL (`target_session_attrs=read-write`), answers 503
with Retry-After meanwhile (never a 500, never a hang), and afterwards every acknowledged
cash-out exists once, is settled and notified, and the ledger verifies.

Real parts only (tests/patroni.py): etcd, two PostgreSQL nodes each run by Patroni, and
`pixgate serve` with its in-process worker. With a synchronous standby nothing acknowledged
may be lost; with an asynchronous one, the test measures what was (docs/scale-out.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import patroni
from tests.processes import free_port
from tests.reliability.load import (
    Load,
    assert_consistent,
    assert_only_unavailable,
    serving,
    settled_rows,
    wait_for_jobs,
)

pytestmark = pytest.mark.skipif(not patroni.installed(), reason=patroni.MISSING)

CLIENTS = 4
STEADY_S = 2.0
RECEIVER = Path(__file__).resolve().parents[2] / "bench" / "_receiver.py"


@contextmanager
def receiver(path: Path) -> Iterator[str]:
    """bench/_receiver.py recording every webhook's body to `path`; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(RECEIVER), str(port), str(path), "--bodies"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        process.terminate()
        process.communicate(timeout=10)  # and closes its stdout


def notified(path: Path) -> dict[str, int]:
    """Final cash_out webhooks received, by externalId."""
    counts: dict[str, int] = {}
    for line in path.read_text().splitlines():
        body = json.loads(line)["body"]
        if body.get("event") == "CashOut" and body.get("status") in ("CONFIRMED", "ERROR"):
            counts[body["externalId"]] = counts.get(body["externalId"], 0) + 1
    return counts


def environment(cluster: patroni.Cluster) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    return env | {
        "PIXGATE_DATABASE_URL": cluster.url("pixgate"),
        "PIXGATE_DB_POOL_MIN": "1",
        "PIXGATE_DB_POOL_MAX": "4",
        "PIXGATE_SETTLEMENT_DELAY_MS": "300",
        # a settlement the failover interrupted is taken again when its lease runs out
        "PIXGATE_JOB_LEASE_SECONDS": "10",
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
        "PIXGATE_LOG_JSON": "true",
    }


def create_database(cluster: patroni.Cluster) -> None:
    subprocess.run(
        ["psql", cluster.url(), "-qc", "CREATE DATABASE pixgate"],
        check=True,
        capture_output=True,
        timeout=30,
    )


@dataclass(frozen=True)
class Killed:
    """When the leader's kill began, when every process of it had been signalled (until
    then a backend may still commit and acknowledge), and the first cash-out accepted after
    it."""

    down: float
    dead: float
    back: float

    @property
    def outage(self) -> tuple[float, float]:
        return self.down, self.back


def kill_leader(cluster: patroni.Cluster, load: Load, *, whole_node: bool) -> Killed:
    """Kill the leader (its postmaster alone, or every process of its node) in the middle of
    the load."""
    time.sleep(STEADY_S)
    leader = cluster.wait("standby")
    down = time.monotonic()
    if whole_node:
        leader.kill()
    else:
        leader.kill_postmaster()
    dead = time.monotonic()
    back = load.first_accepted_after(down + 0.5, timeout=90)
    assert back is not None, f"no cash-out accepted after the kill: {cluster.members()}"
    time.sleep(STEADY_S)
    return Killed(down, dead, back)


def test_a_synchronous_standby_takes_over_with_nothing_acknowledged_lost(
    tmp_path: Path,
) -> None:
    hooks = tmp_path / "hooks"
    with patroni.cluster(synchronous=True) as cluster:
        create_database(cluster)
        first = cluster.wait("standby")
        with (
            receiver(hooks) as hook,
            serving(environment(cluster), tmp_path / "serve.log", webhook=hook) as gateway,
        ):
            load = Load(gateway)
            load.start(CLIENTS)
            try:
                crash = kill_leader(cluster, load, whole_node=False)
                failover = kill_leader(cluster, load, whole_node=True)
            finally:
                load.finish()
            promoted = cluster.wait("leader")
            assert promoted is not first, "the standby was never promoted"

            outage = assert_only_unavailable(load, crash.outage, failover.outage)
            stored = settled_rows(cluster.url("pixgate"), gateway.account["accountId"])
            wait_for_jobs(cluster.url("pixgate"))
            external_ids = {r["external_id"] for r in stored}
            assert load.acknowledged <= external_ids, (
                f"{len(load.acknowledged - external_ids)} acknowledged cash-outs lost"
            )
            assert_consistent(load, stored)
    missing = external_ids - set(notified(hooks))  # the receiver has flushed its record
    assert not missing, f"{len(missing)} settled cash-outs never notified"
    print(
        f"\npostmaster SIGKILL: first 201 {crash.back - crash.down:.1f} s after; node SIGKILL: "
        f"{promoted.name} promoted, first 201 {failover.back - failover.down:.1f} s after; "
        f"{outage}; {len(stored)} cash-outs stored, each notified"
    )


def test_an_asynchronous_standby_loses_at_most_what_was_in_flight(tmp_path: Path) -> None:
    """Without a synchronous standby, the commits the primary acknowledged but had not yet
    streamed die with it. What remains is consistent (each payment whole or absent, the
    ledger balanced); how much was lost is measured and printed."""
    with patroni.cluster(synchronous=False) as cluster:
        create_database(cluster)
        with serving(environment(cluster), tmp_path / "serve.log") as gateway:
            load = Load(gateway)
            load.start(CLIENTS)
            try:
                killed = kill_leader(cluster, load, whole_node=True)
            finally:
                load.finish()
            outage = assert_only_unavailable(load, killed.outage)
            stored = settled_rows(cluster.url("pixgate"), gateway.account["accountId"])
            assert_consistent(load, stored)
    lost = load.acknowledged - {r["external_id"] for r in stored}
    in_flight = {
        a.external_id for a in load.attempts if a.status == 201 and a.started < killed.dead
    }
    assert lost <= in_flight, "lost a cash-out sent after the old primary was dead"
    print(
        f"\nasynchronous standby, node SIGKILL: first 201 {killed.back - killed.down:.1f} s "
        f"after; {outage}; "
        f"acknowledged and lost: {len(lost)} of {len(load.acknowledged)}"
    )
