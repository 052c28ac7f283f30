"""Debian's PgBouncer in transaction mode in front of the test server, for the tests and the
benches that run the gateway through a pooler."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from tests.processes import free_port

BINARY = "/usr/sbin/pgbouncer"
MISSING = "Debian's pgbouncer is not installed (apt-get install -y pgbouncer)"
SERVER_POOL = 3
"""Server connections per database and user: fewer than the gateway's pool, so that its
transactions share them, as they do behind a real pooler."""

CONFIG = """\
[databases]
* = host={host} port={port} user={user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = {pool}
max_client_conn = 500
ignore_startup_parameters = extra_float_digits
logfile = {home}/pgbouncer.log
pidfile = {home}/pgbouncer.pid
"""


def installed() -> bool:
    return Path(BINARY).exists()


@dataclass
class PgBouncer:
    """A running PgBouncer: `url(database_url)` is the same database through it."""

    port: int
    log: Path
    command: list[str]
    process: subprocess.Popen[bytes]

    def url(self, database_url: str) -> str:
        parsed = urlparse(database_url)
        return parsed._replace(netloc=f"{parsed.username}@127.0.0.1:{self.port}").geturl()

    def kill(self) -> None:
        """SIGKILL: every client connection drops at once, as when its machine dies."""
        self.process.kill()
        self.process.communicate(timeout=10)

    def start(self) -> None:
        """PgBouncer again, on the same port, once it is not running."""
        assert self.process.poll() is not None, "pgbouncer is running"
        self.process = _started(self.command, self.port)


@contextmanager
def pgbouncer(server_url: str, *, pool: int = SERVER_POOL) -> Iterator[PgBouncer]:
    """PgBouncer in transaction mode in front of `server_url`'s server (trust: it connects as
    that URL's user whatever the client says). It refuses to run as root, so a root caller
    runs it as `postgres`."""
    server = urlparse(server_url)
    home = Path(tempfile.mkdtemp(prefix="pixgate-pgbouncer-"))
    listen_port = free_port()
    (home / "pgbouncer.ini").write_text(
        CONFIG.format(
            host=server.hostname,
            port=server.port or 5432,
            user=server.username or "postgres",
            listen_port=listen_port,
            pool=pool,
            home=home,
        )
    )
    command = [BINARY, str(home / "pgbouncer.ini")]
    if os.getuid() == 0:
        postgres = pwd.getpwnam("postgres")
        os.chown(home, postgres.pw_uid, postgres.pw_gid)
        command = [BINARY, "-u", "postgres", str(home / "pgbouncer.ini")]
    process = _started(command, listen_port)
    running = PgBouncer(listen_port, home / "pgbouncer.log", command, process)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.terminate()
        running.process.communicate(timeout=10)  # and closes its stderr
        shutil.rmtree(home, ignore_errors=True)


def _started(command: list[str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_listening(port, process)
    return process


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            assert process.stderr is not None
            raise RuntimeError(f"pgbouncer exited: {process.stderr.read().decode()}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("pgbouncer did not listen within 10 s")
