"""The embedded default: `pixgate serve` with no database URL, as a new user runs it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
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
        created = subprocess.run(
            [PIXGATE, "accounts", "create", "--name", "Embedded", "--balance", "7.00", "--json"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        account = json.loads(created.stdout)
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
        assert balances.json()["data"][0]["balanceAmount"]["available"] == 7.0
        assert pid_file.exists(), "the CLI leaving must not stop the server serve still uses"
    finally:
        server.terminate()
        server.wait(timeout=30)
    for _ in range(40):
        if not pid_file.exists():
            break
        time.sleep(0.25)
    assert not pid_file.exists(), "the last process out stops the embedded server"
