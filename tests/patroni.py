"""A highly available PostgreSQL cluster of Debian's packages for the failover tests: one etcd,
and two PostgreSQL nodes each run by Patroni (a primary and a streaming standby, synchronous or
not), on free ports in a temporary directory. Nothing here stands in for them: the test kills
their real processes and Patroni promotes the standby."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tests.processes import free_port

PATRONI = "/usr/bin/patroni"
ETCD = "/usr/bin/etcd"
BINDIR = Path("/usr/lib/postgresql/15/bin")
MISSING = (
    "Debian's patroni or etcd-server is not installed (apt-get install -y patroni etcd-server)"
)
USER = "postgres"
"""Patroni runs PostgreSQL, which refuses root: a root caller runs both as Debian's postgres."""

TTL_S = 10
"""The leader key's lifetime: a primary that stops renewing it is replaced after this long."""

CONFIG_DCS = {
    "ttl": TTL_S,
    "loop_wait": 1,
    "retry_timeout": 3,
    "maximum_lag_on_failover": 1 << 20,
    "postgresql": {
        # A killed primary that comes back rejoins as a standby: rewound, or cloned again.
        "use_pg_rewind": True,
        "remove_data_directory_on_rewind_failure": True,
        "remove_data_directory_on_diverged_timelines": True,
        "parameters": {
            "max_connections": 60,
            "shared_buffers": "32MB",
            "wal_level": "replica",
            "hot_standby": "on",
            "max_wal_senders": 5,
            "max_replication_slots": 5,
            "wal_keep_size": "128MB",
        },
    },
}


def installed() -> bool:
    return all(Path(p).exists() for p in (PATRONI, ETCD, BINDIR / "postgres"))


@dataclass
class Node:
    """A PostgreSQL node: its Patroni process, started with `argv` and `env` in `home` (as
    USER when we are root), and its data directory."""

    name: str
    pg_port: int
    api_port: int
    home: Path
    data: Path
    argv: list[str]
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        self.process = self._start()

    def postmaster(self) -> psutil.Process | None:
        try:
            return psutil.Process(int((self.data / "postmaster.pid").read_text().split()[0]))
        except (FileNotFoundError, ValueError, IndexError, psutil.NoSuchProcess):
            return None

    def kill_postmaster(self) -> None:
        """SIGKILL of the postmaster alone: its backends die with it; Patroni lives on."""
        postmaster = self.postmaster()
        assert postmaster is not None, f"{self.name} runs no PostgreSQL: {os.listdir(self.data)}"
        postmaster.send_signal(signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL of every process of the node at once (Patroni, the postmaster, its
        children), as when the machine dies."""
        postmaster = self.postmaster()
        victims = [psutil.Process(self.process.pid)]
        if postmaster is not None:
            victims += [postmaster, *postmaster.children(recursive=True)]
        for process in victims:
            with suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def restart(self) -> None:
        """Patroni again on the node's files, after `kill`: it rejoins as a standby."""
        assert self.process.poll() is not None, f"{self.name} is running"
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        with (self.home / "patroni.out").open("ab") as out:
            return subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                env=self.env,
                **as_user(self.home),
            )


@dataclass
class Cluster:
    """Two Patroni nodes over one etcd; `url` names both, as a client's multi-host URL does."""

    nodes: list[Node]
    synchronous: bool

    def url(self, database: str = "postgres") -> str:
        hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in self.nodes)
        return f"postgresql://postgres@{hosts}/{database}?target_session_attrs=read-write"

    def members(self) -> dict[str, dict[str, Any]]:
        """Patroni's view of the cluster, from any node still answering (name: member)."""
        return {m["name"]: m for m in self._state().get("members", [])}

    def _state(self) -> dict[str, Any]:
        """Patroni's `GET /cluster`, from any node still answering ({} if none does)."""
        for node in self.nodes:
            if node.process.poll() is not None:
                continue
            try:
                url = f"http://127.0.0.1:{node.api_port}/cluster"
                with urllib.request.urlopen(url, timeout=2) as answer:
                    state: dict[str, Any] = json.load(answer)
            except OSError:
                continue
            return state
        return {}

    def maintenance(self) -> None:
        """Patroni's maintenance mode: it stops managing PostgreSQL (no failover, and a
        standby's paused replay stays paused instead of being resumed)."""
        node = next(n for n in self.nodes if n.process.poll() is None)
        request = urllib.request.Request(
            f"http://127.0.0.1:{node.api_port}/config",
            data=json.dumps({"pause": True}).encode(),
            method="PATCH",
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=5).close()
        deadline = time.monotonic() + 10
        while not self._state().get("pause"):
            assert time.monotonic() < deadline, "Patroni did not enter maintenance mode"
            time.sleep(0.2)

    def leader(self) -> Node | None:
        members = self.members()
        return next(
            (
                n
                for n in self.nodes
                if members.get(n.name, {}).get("role") == "leader"
                and members[n.name].get("state") == "running"
            ),
            None,
        )

    def wait(self, ready: str, timeout: float = 90.0) -> Node:
        """Until a node leads and (`ready` == "standby") the other streams from it as the
        cluster's mode wants it (a synchronous standby in synchronous mode); the leader."""
        want = "sync_standby" if self.synchronous else "replica"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            members = self.members()
            leader = self.leader()
            streaming = any(
                m.get("role") == want and m.get("state") in ("running", "streaming")
                for m in members.values()
            )
            running = leader is not None and leader.postmaster() is not None
            if leader is not None and running and (ready == "leader" or streaming):
                return leader
            time.sleep(0.2)
        raise AssertionError(f"no {ready} within {timeout:g} s: {self.members()}")


def as_user(*paths: Path) -> dict[str, Any]:
    """Popen's arguments that run a process as USER when we are root, `paths` made USER's."""
    if os.geteuid() != 0:
        return {}
    owner = pwd.getpwnam(USER)
    for path in paths:
        os.chown(path, owner.pw_uid, owner.pw_gid)
    return {"user": USER}


def _node_config(
    name: str, scope: str, home: Path, pg: int, api: int, etcd: int, sync: bool
) -> str:
    """Patroni's YAML configuration, written as JSON (YAML's superset)."""
    return json.dumps(
        {
            "scope": scope,
            "name": name,
            "log": {"level": "WARNING", "dir": str(home), "file_num": 1},
            "restapi": {"listen": f"127.0.0.1:{api}", "connect_address": f"127.0.0.1:{api}"},
            "etcd3": {"hosts": [f"127.0.0.1:{etcd}"]},
            "bootstrap": {
                "dcs": CONFIG_DCS | {"synchronous_mode": sync},
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}, "no-sync"],
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{pg}",
                "connect_address": f"127.0.0.1:{pg}",
                "data_dir": str(home / "data"),
                "bin_dir": str(BINDIR),
                "pgpass": str(home / "pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": "postgres"},
                    "replication": {"username": "postgres", "password": "postgres"},
                },
                "parameters": {"unix_socket_directories": str(home)},
            },
        }
    )


@contextmanager
def _etcd(home: Path) -> Iterator[int]:
    client, peer = free_port(), free_port()
    with (home / "etcd.log").open("wb") as log:
        process = subprocess.Popen(
            [
                ETCD,
                *("--name", "e1", "--data-dir", str(home / "etcd")),
                *("--listen-client-urls", f"http://127.0.0.1:{client}"),
                *("--advertise-client-urls", f"http://127.0.0.1:{client}"),
                *("--listen-peer-urls", f"http://127.0.0.1:{peer}"),
                *("--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}"),
                *("--initial-cluster", f"e1=http://127.0.0.1:{peer}"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, (home / "etcd.log").read_text()[-2000:]
            with suppress(OSError):
                urllib.request.urlopen(f"http://127.0.0.1:{client}/health", timeout=1).close()
                break
            assert time.monotonic() < deadline, "etcd did not answer in 20 s"
            time.sleep(0.1)
        yield client
    finally:
        process.kill()
        process.wait(timeout=10)


@contextmanager
def cluster(*, synchronous: bool) -> Iterator[Cluster]:
    """A primary and a standby, streaming (synchronously when `synchronous`: Patroni's
    synchronous mode, which only promotes a standby that had every commit), ready."""
    home = Path(tempfile.mkdtemp(prefix="pixgate-patroni-"))
    scope = f"pixgate-{home.name[-8:]}"
    nodes: list[Node] = []
    try:
        with ExitStack() as stack:
            etcd = stack.enter_context(_etcd(home))
            stack.callback(_stop, nodes)
            for name in ("n1", "n2"):
                node_home = home / name
                node_home.mkdir()
                pg, api = free_port(), free_port()
                config = node_home / "patroni.yml"
                config.write_text(_node_config(name, scope, node_home, pg, api, etcd, synchronous))
                as_user(home)
                argv = [PATRONI, str(config)]
                nodes.append(Node(name, pg, api, node_home, node_home / "data", argv))
                ha = Cluster(nodes, synchronous)
                # the first bootstraps the cluster; the second clones it then streams
                ha.wait("leader" if name == "n1" else "standby")
            yield Cluster(nodes, synchronous)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _stop(nodes: list[Node]) -> None:
    for node in nodes:
        if node.process.poll() is None:
            node.kill()
        postmaster = node.postmaster()
        if postmaster is not None:  # a PostgreSQL whose Patroni was killed before
            with suppress(psutil.NoSuchProcess):
                for process in [postmaster, *postmaster.children(recursive=True)]:
                    process.send_signal(signal.SIGKILL)
