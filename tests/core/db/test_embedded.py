"""The embedded default: `pixgate serve` with no database URL, as a new user runs it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import psutil
import pytest

PIXGATE = str(Path(sys.executable).with_name("pixgate"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    yield tmp_path, env


def test_serve_on_the_embedded_default(home: tuple[Path, dict[str, str]]) -> None:
    cwd, env = home
    port = _free_port()
    server = subprocess.Popen(
        [PIXGATE, "serve", "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        assert httpx.get(f"{base}/readyz").json() == {"status": "ready"}
        pid_file = cwd / "pixgate-data" / "pg" / "postmaster.pid"
        assert pid_file.exists(), "the embedded server lives in ./pixgate-data"

        # A second process in the same directory joins the same server.
        account = _account(cwd, env, "Embedded")
        assert _available(base, account) == 7.0
        assert pid_file.exists(), "the CLI leaving must not stop the server serve still uses"
    finally:
        server.terminate()
        server.wait(timeout=30)
    for _ in range(40):
        if not pid_file.exists():
            break
        time.sleep(0.25)
    assert not pid_file.exists(), "the last process out stops the embedded server"


# --- after a crash ------------------------------------------------------------------------------


def _serve(cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """`pixgate serve` in a session of its own (a supervisor's process group), once ready."""
    port = _free_port()
    server = subprocess.Popen(
        [PIXGATE, "serve", "--port", str(port)],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, "pixgate serve exited during start-up"
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return server, base
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    server.kill()
    server.wait()
    raise AssertionError("pixgate serve did not become ready in 120 s")


def _kill(server: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the whole process group, as an OOM killer or a lost machine would."""
    os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=30)


def _postgres_of(pgdata: Path) -> list[psutil.Process]:
    """The PostgreSQL processes working in `pgdata` (the server changes into it)."""
    found = []
    for process in psutil.process_iter(["name"]):
        if process.info["name"] != "postgres":
            continue
        try:
            if Path(process.cwd()).resolve() == pgdata.resolve() and (
                process.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(process)
        except psutil.Error:
            pass
    return found


def _postmaster_pid(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().splitlines()[0])


def _account(cwd: Path, env: dict[str, str], name: str) -> dict[str, str]:
    created = subprocess.run(
        [PIXGATE, "accounts", "create", "--name", name, "--balance", "7.00", "--json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    account: dict[str, str] = json.loads(created.stdout)
    return account


def _available(base: str, account: dict[str, str]) -> float:
    certificate = {"X-SSL-Client-Cert": quote(account["certificatePem"], safe="")}
    token = httpx.post(
        f"{base}/api/auth/token",
        json={"clientId": account["clientId"], "clientSecret": account["clientSecret"]},
        headers=certificate,
    )
    assert token.status_code == 201, token.text
    balances = httpx.get(
        f"{base}/accounts/balances",
        headers={"Authorization": f"Bearer {token.json()['access_token']}", **certificate},
    )
    assert balances.status_code == 200, balances.text
    available: float = balances.json()["data"][0]["balanceAmount"]["available"]
    return available


def _stop_and_check_nothing_remains(server: subprocess.Popen[bytes], pgdata: Path) -> None:
    server.terminate()
    server.wait(timeout=60)
    deadline = time.monotonic() + 20
    while _postgres_of(pgdata) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert _postgres_of(pgdata) == [], "the last process out stops the server, adopted or not"
    assert not (pgdata / "postmaster.pid").exists()


def test_a_server_left_by_a_killed_serve_is_adopted_then_stopped(
    home: tuple[Path, dict[str, str]],
) -> None:
    cwd, env = home
    pgdata = cwd / "pixgate-data" / "pg"
    first, _ = _serve(cwd, env)
    try:
        account = _account(cwd, env, "Before the crash")
        postmaster = _postmaster_pid(pgdata)
    finally:
        _kill(first)
    assert psutil.pid_exists(postmaster), "PostgreSQL runs in a session of its own"
    assert _postgres_of(pgdata), "the crash left the server behind"

    second, base = _serve(cwd, env)
    try:
        assert _postmaster_pid(pgdata) == postmaster, "the server left behind is adopted"
        assert _available(base, account) == 7.0, "what was committed before the crash is there"
    finally:
        _stop_and_check_nothing_remains(second, pgdata)


def test_a_stale_postmaster_pid_does_not_stop_the_next_start(
    home: tuple[Path, dict[str, str]],
) -> None:
    """The server itself was killed, and its process id now belongs to another program (as
    after a reboot): the next start starts a server, which replays its log."""
    cwd, env = home
    pgdata = cwd / "pixgate-data" / "pg"
    first, _ = _serve(cwd, env)
    try:
        account = _account(cwd, env, "Before the crash")
        server_processes = _postgres_of(pgdata)
    finally:
        _kill(first)
    for process in server_processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(server_processes, timeout=30)
    other = subprocess.Popen(["sleep", "300"])
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        (pgdata / "postmaster.pid").write_text("\n".join([str(other.pid), *lines[1:]]) + "\n")

        second, base = _serve(cwd, env)
        try:
            assert _postmaster_pid(pgdata) != other.pid
            assert _available(base, account) == 7.0, "nothing committed is lost"
        finally:
            _stop_and_check_nothing_remains(second, pgdata)
    finally:
        other.kill()
        other.wait()


def _on_another_host(command: list[str]) -> list[str]:
    """`command` in a UTS namespace of its own, under another host name, as on a second
    machine that mounts the same directory."""
    script = 'hostname pixgate-other-host && exec "$@"'
    return ["unshare", "--uts", "sh", "-c", script, "sh", *command]


@pytest.mark.skipif(os.geteuid() != 0, reason="a second host name needs unshare as root")
def test_a_second_host_on_the_same_directory_is_refused(
    home: tuple[Path, dict[str, str]],
) -> None:
    """Two servers on one data directory would corrupt it, and the other machine's processes
    look dead from here: the embedded database serves one host, the second is told why."""
    cwd, env = home
    pgdata = cwd / "pixgate-data" / "pg"
    server, base = _serve(cwd, env)
    try:
        postmaster = _postmaster_pid(pgdata)
        refused = subprocess.run(
            _on_another_host([PIXGATE, "accounts", "create", "--name", "Elsewhere"]),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"in use by pixgate on {socket.gethostname()}" in refused.stderr
        assert "set PIXGATE_DATABASE_URL" in refused.stderr
        assert "Traceback" not in refused.stderr
        upgrade = subprocess.run(
            _on_another_host([PIXGATE, "db", "upgrade"]),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert upgrade.returncode == 1, upgrade.stdout + upgrade.stderr
        assert "in use by pixgate on" in upgrade.stderr and "Traceback" not in upgrade.stderr
        assert _postmaster_pid(pgdata) == postmaster, "the server of this host is untouched"
        assert httpx.get(f"{base}/readyz").json() == {"status": "ready"}
        listed = subprocess.run(
            [PIXGATE, "accounts", "list", "--json"], cwd=cwd, env=env, capture_output=True
        )
        assert json.loads(listed.stdout) == [], "the refused command wrote nothing"
    finally:
        _stop_and_check_nothing_remains(server, pgdata)
