"""compose.ha.yaml over compose.yaml, run as its services would run, on this machine (no Docker
engine here): etcd and the two PostgreSQL nodes Patroni runs, from their own commands,
environment and mounted configuration (tests/deploy/nodes.py), then the migrate service, the
gateway and the worker with the database URL the file gives them (tests/deploy/compose.py),
with `.env`'s example filled in.

Then the cluster fails under a client's cash-outs: etcd dies and the primary stays the primary
(failsafe mode); the standby's whole node dies and the primary goes on alone; then the
primary's whole node dies and the standby takes over, while the gateway answers 503 with
Retry-After. Afterwards every acknowledged cash-out is there once,
settled, and the ledger verifies.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jsonschema_rs
import orjson
import pytest
import yaml

from tests import patroni
from tests.deploy.compose import (
    COMPOSE_HA_YAML,
    ThisMachine,
    command,
    environment,
    image_command,
    load,
    variables,
)
from tests.deploy.nodes import DATABASE_SERVICES, PATRONI_DIR, Nodes
from tests.deploy.test_compose import SPEC
from tests.processes import free_port, started
from tests.reliability.load import (
    Gateway,
    Load,
    assert_consistent,
    assert_only_unavailable,
    settled_rows,
    signed_in,
    wait_for_jobs,
)

VALUES = variables()
COMPOSE = load(VALUES, COMPOSE_HA_YAML)
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
PIXGATE_SERVICES = ("gateway", "worker", "migrate")
DCS: dict[str, Any] = yaml.safe_load((PATRONI_DIR / "patroni.yml").read_text())["bootstrap"]["dcs"]

needs_patroni = pytest.mark.skipif(not patroni.installed(), reason=patroni.MISSING)


def database_url() -> str:
    """The URL compose.ha.yaml gives the pixgate services (the same for each)."""
    (url,) = {environment(SERVICES[name])["PIXGATE_DATABASE_URL"] for name in PIXGATE_SERVICES}
    return url


@dataclass
class Database:
    """The running database services."""

    nodes: Nodes
    ha: patroni.Cluster
    etcd: subprocess.Popen[bytes]
    log: Path

    def kill_etcd(self) -> None:
        self.etcd.kill()
        self.etcd.wait(timeout=10)

    def restart_etcd(self) -> None:
        """etcd again on its volume."""
        assert self.etcd.poll() is not None
        self.etcd = self.nodes.etcd(self.log)


@contextmanager
def database(nodes: Nodes, log: Path) -> Iterator[Database]:
    """etcd, then both nodes; once one leads and the other is its synchronous standby."""
    running = Database(nodes, patroni.Cluster([], synchronous=True), nodes.etcd(log), log)
    try:
        for name in DATABASE_SERVICES[1:]:
            running.ha.nodes.append(nodes.node(name))
        running.ha.wait("standby", timeout=120)
        yield running
    finally:
        for node in running.ha.nodes:
            if node.process.poll() is None:
                node.kill()
        if running.etcd.poll() is None:
            running.kill_etcd()


def health_check(name: str) -> list[str]:
    test = SERVICES[name]["healthcheck"]["test"]
    assert test[0] == "CMD", test
    return [str(part) for part in test[1:]]


def healthy(nodes: Nodes, name: str) -> bool:
    """The service's health check as written, its port 5432 the node's here."""
    env = nodes.env(name) | {"PGPORT": str(nodes.ports[f"{name}:5432"])}
    done = subprocess.run(health_check(name), env=env, capture_output=True, timeout=10)
    return done.returncode == 0


def pixgate(machine: ThisMachine, service: str, *args: str) -> str:
    """A CLI command in a pixgate service's environment (`docker compose exec`)."""
    done = subprocess.run(
        image_command(["pixgate", *args]),
        env=machine.process_env(SERVICES[service]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@contextmanager
def worker(machine: ThisMachine, log: Path) -> Iterator[None]:
    with log.open("ab") as output:
        process = subprocess.Popen(
            machine.worker_argv(command(SERVICES["worker"]), free_port()),
            env=machine.process_env(SERVICES["worker"]),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextmanager
def gateway(machine: ThisMachine, log: Path) -> Iterator[Gateway]:
    """The gateway service's command and the worker's, with a funded account whose limits are
    out of the way and a token for it (the client stands where nginx would)."""
    created = ("accounts", "create", "--name", "HA Ltda", "--balance", "100000.00", "--json")
    account = json.loads(pixgate(machine, "gateway", *created))
    limit = "100000000"
    pixgate(
        machine,
        "gateway",
        *("accounts", "update", str(account["accountId"]), "--transaction-limit", limit),
        *("--daily-limit", limit, "--night-limit", limit),
    )
    env = machine.process_env(SERVICES["gateway"])
    argv = machine.gateway_argv(command(SERVICES["gateway"]))
    with (
        log.open("ab") as output,
        started(argv, env, output=output) as (base, _),
        worker(machine, log.with_name("worker.log")),
    ):
        headers = signed_in(base, account)
        yield Gateway(base=base, env=env, account=account, headers=headers, log=log)


def answered(load: Load, status: int, start: float, end: float) -> int:
    """How many cash-outs sent between `start` and `end` were answered `status`."""
    with load.lock:
        return sum(a.status == status and start <= a.started <= end for a in load.attempts)


@needs_patroni
def test_payments_survive_etcd_and_then_the_primary(tmp_path: Path) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="pixgate-compose-ha-") as home,
        database(Nodes.prepare(Path(home), SERVICES), tmp_path / "etcd.log") as running,
    ):
        nodes = running.nodes
        ha = running.ha
        first = ha.wait("standby")
        assert all(healthy(nodes, name) for name in DATABASE_SERVICES[1:])
        url = nodes.value(database_url())
        machine = ThisMachine(url, tmp_path / "conf.d")
        pixgate(machine, "migrate", *command(SERVICES["migrate"])[1:])
        with gateway(machine, tmp_path / "gateway.log") as served:
            load = Load(served)
            load.start(2)
            try:
                time.sleep(2)
                # etcd dies: the leader cannot renew its lease, yet stays the primary
                etcd_lost = time.monotonic()
                running.kill_etcd()
                time.sleep(DCS["ttl"] + DCS["loop_wait"] + 5)
                etcd_back = time.monotonic()
                running.restart_etcd()
                assert ha.wait("standby", timeout=90) is first
                # the standby's whole node dies: the primary goes on alone, then it rejoins
                standby_lost = time.monotonic()
                standby = next(node for node in ha.nodes if node is not first)
                standby.kill()
                time.sleep(DCS["loop_wait"] * 2)
                standby_back = time.monotonic()
                standby.restart()
                assert ha.wait("standby", timeout=90) is first
                down = time.monotonic()
                first.kill()
                back = load.first_accepted_after(down + 0.5, timeout=120)
                assert back is not None, f"nothing accepted after the kill: {ha.members()}"
                time.sleep(2)
            finally:
                load.finish()
            promoted = ha.wait("leader")
            after_lease = answered(load, 201, etcd_lost + DCS["ttl"], etcd_back)
            alone = answered(load, 201, standby_lost + DCS["loop_wait"], standby_back)
            assert not answered(load, 503, standby_lost, standby_back), "refused, standby gone"
            waited = max(
                a.elapsed for a in load.attempts if standby_lost <= a.started <= standby_back
            )
            assert not answered(load, 503, etcd_lost, etcd_back), "refused while etcd was gone"
            outage = assert_only_unavailable(load, (down, back))
            stored = settled_rows(url, served.account["accountId"], timeout=120)
            wait_for_jobs(url, timeout=120)
            assert_consistent(load, stored)
    assert after_lease, "no payment while etcd was gone past the lease"
    assert alone, "no payment while the standby was gone"
    assert promoted is not first, "the standby was never promoted"
    lost = load.acknowledged - {r["external_id"] for r in stored}
    assert not lost, f"{len(lost)} acknowledged cash-outs lost"
    print(
        f"\ncompose.ha.yaml: {after_lease} cash-outs acknowledged with etcd gone past the "
        f"lease; {alone} with the standby gone, the slowest then {waited:.1f} s; "
        f"{promoted.name} promoted, first 201 {back - down:.1f} s after the node's "
        f"SIGKILL; {outage}"
    )


# --- the file, read ------------------------------------------------------------------------


def test_compose_ha_yaml_over_compose_yaml_is_a_compose_file() -> None:
    validator = jsonschema_rs.validator_for(orjson.loads(SPEC.read_bytes()))
    for document in (yaml.safe_load(COMPOSE_HA_YAML.read_text()), COMPOSE):
        assert [error.message for error in validator.iter_errors(document)] == []


def test_every_pixgate_service_names_both_nodes_and_wants_the_primary() -> None:
    url = urlsplit(database_url())
    assert url.netloc.split("@")[1] == "postgres:5432,postgres-2:5432"
    assert parse_qs(url.query) == {"target_session_attrs": ["read-write"]}
    assert SERVICES["migrate"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "postgres-2": {"condition": "service_healthy"},
    }


def test_the_nodes_stay_on_the_internal_network_with_volumes_of_their_own() -> None:
    """Only nginx publishes a port; each database service keeps its data in a volume no
    other service mounts, and the nodes have the health check compose.yaml's database had."""
    assert {name for name, service in SERVICES.items() if "ports" in service} == {"nginx"}
    volumes: dict[str, str] = {}
    for name in DATABASE_SERVICES:
        service = SERVICES[name]
        assert service["networks"] == ["backend"], name
        (volume,) = [v.split(":")[0] for v in service["volumes"] if not v.startswith("./")]
        assert volume in COMPOSE["volumes"]
        volumes[volume] = name
    assert len(volumes) == len(DATABASE_SERVICES)
    assert health_check("postgres") == health_check("postgres-2")


def test_a_failover_keeps_every_acknowledged_commit() -> None:
    """Patroni's cluster settings: synchronous mode (a commit waits for the standby, and only
    such a standby is promoted), failsafe mode, a lagging standby never promoted, and a failed
    primary rewound into a standby."""
    assert DCS["synchronous_mode"] is True
    assert DCS["failsafe_mode"] is True
    assert DCS["maximum_lag_on_failover"] <= 1 << 20
    assert DCS["postgresql"]["use_pg_rewind"] is True
    assert DCS["loop_wait"] + 2 * DCS["retry_timeout"] <= DCS["ttl"]
