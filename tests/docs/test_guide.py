"""docs/guide.md runs as written against a real `pixgate serve`, and lists every sandbox
scenario there is.

Each code block carries a marker, `<!-- guide: NAME -->`. Three names tell the test how the
reader's machine differs from its own: `serve` is not run (the test starts the server the
block shows, with its settings, on a free port and the emptied test database); the
`environment` block's exports are applied as written, but for `BASE` and `RECEIVER_PORT`,
which name that server and a free port; `receiver` is saved as receiver.py and left
running, as the reader does in a third terminal. Every other block is run, and what it
prints is checked against `PRINTS`."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pixgate.runtime import Runtime
from pixgate.sandbox.public import rules
from tests.docs.guide_runner import (
    GUIDE,
    Block,
    Shell,
    guide_blocks,
    outputs_by_block,
    python_script,
)
from tests.processes import PIXGATE, free_port, running, server_env

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
E2E = "E[0-9]{8}[0-9]{12}[0-9A-Za-z]{11}"
PRINTS: dict[str, list[str]] = {
    "helper": [r"\A\Z"],
    "account": [rf"^account 1, PIX key {UUID}$"],
    "token": [r'"balanceAmount":\{"available":1000\.00,"blocked":0\.00'],
    "webhooks": [
        r'\A(\{"success":true,"message":"[^"]*"\}\n){2}\{"success":true,"message":"[^"]*"\}\Z'
    ],
    "charge": [
        r"\APENDING$",
        r"^00020101021226\d\d0014br\.gov\.bcb\.pix25\d\d127\.0\.0\.1:\d+/qr/v2/",
    ],
    "pay": [rf'^\{{"transactionId":"{UUID}","endToEndId":"{E2E}"\}}$'],
    "cash-out": [r'"externalId":"saque-1","status":"PENDING"'],
    "statement": [
        r"\APix out Confirmado 10\.0 Maria Souza \*\*\*\.982\.247-\*\* Sandbox Pagamentos S\.A\.$",
        r"^1015\.5\Z",
    ],
    "refund": [r'"externalId":"devolucao1","status":"PENDING","refundValue":15\.00'],
    "med": [r"\A25\.0\nANALYZED\Z"],
    "scenarios": [r"\APENDING\nPIX_INSUFFICIENT_BALANCE\Z"],
    "py-connect": [r"\A1015\.50\Z"],
    "py-charge": [r"\APENDING True\Z"],
    "py-cash-out": [r"\APENDING Confirmado 2\.50 Maria Souza\Z"],
    "py-refund": [r"\APENDING 20\.00 ANALYZED\Z"],
    "py-scenario": [r"\A400 PIX_INSUFFICIENT_BALANCE\Z"],
}
"""What each block run prints: patterns searched in its output, line by line."""
RECEIVED = [
    "CashIn CONFIRMED pedido-42",
    "CashOut CONFIRMED saque-1",
    "RefundIn CONFIRMED devolucao1",
    "CashOut ERROR saque-2 TAX_ID_MISMATCH",
    "CashIn CONFIRMED pedido-43",
    "CashOut CONFIRMED saque-4",
    "RefundIn CONFIRMED devolucao2",
]
"""Lines the receiver prints by the end (and the MED cases' refunds, under generated ids)."""
ACTIVATE = ". .venv/bin/activate"
"""The venv the reader activates; the test's own comes first on PATH."""
VENV_BIN = str(Path(sys.executable).parent)


def test_every_block_is_run_and_checked() -> None:
    names = {b.name for b in guide_blocks(GUIDE.read_text())}
    assert names - {"serve", "environment", "receiver"} == set(PRINTS)


def test_the_scenario_table_lists_every_scenario() -> None:
    section = GUIDE.read_text().split("## 11. Sandbox scenarios")[1].split("\n## ")[0]
    listed = re.findall(r"^\| `([A-Z0-9_<>n]+)` \|", section, flags=re.M)
    assert sorted(listed) == sorted(rules.ALLOWED)


def test_the_guide_runs_as_written(rt: Runtime, tmp_path: Path) -> None:
    """On the test database, emptied; its ledger is checked after, as after every test."""
    blocks = guide_blocks(GUIDE.read_text())
    named = {b.name: b for b in blocks}
    receiver_port = free_port()
    database_url = rt.settings.database_url
    assert database_url is not None
    with (
        (tmp_path / "server.log").open("wb") as log,
        running(
            [PIXGATE, "serve"],
            server_env(database_url) | serve_settings(named["serve"]),
            output=log,
        ) as base,
    ):
        env = server_env(database_url) | {"PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
        env |= environment(named["environment"], BASE=base, RECEIVER_PORT=str(receiver_port))
        with ExitStack() as stack:
            shell = Shell(env, tmp_path)
            stack.callback(shell.close)
            for block in blocks:
                if block.language == "sh" and block.name in PRINTS:
                    assert_prints(block.name, shell.run(block.code))
                elif block.name == "receiver":
                    received = stack.enter_context(receiving(block, env, tmp_path, receiver_port))
            python = [b for b in blocks if b.language == "python" and b.name in PRINTS]
            for name, output in run_python(python, env, tmp_path).items():
                assert_prints(name, output)
            assert_received(received)


def serve_settings(block: Block) -> dict[str, str]:
    """The settings the `serve` block starts the server with: `NAME=value ... pixgate serve`."""
    (serve,) = [line for line in block.code.splitlines() if line != ACTIVATE]
    *assignments, program, command = serve.split()
    assert (program, command) == ("pixgate", "serve")
    settings = dict(assignment.split("=", 1) for assignment in assignments)
    assert all(name.startswith("PIXGATE_") for name in settings)
    return settings


def environment(block: Block, **adapted: str) -> dict[str, str]:
    """The `environment` block's exports, with the adapted names given their test values;
    the venv it activates is the test's own (first on PATH)."""
    exported: dict[str, str] = {}
    for line in block.code.splitlines():
        if line == ACTIVATE:
            continue
        match = re.fullmatch(r"export (\w+)=(\S+)", line)
        assert match is not None, f"not an export: {line!r}"
        exported[match[1]] = adapted.get(match[1], match[2])
    assert set(adapted) <= set(exported)
    return exported


@contextmanager
def receiving(block: Block, env: dict[str, str], cwd: Path, port: int) -> Iterator[Path]:
    """receiver.py, saved from the block and running until the end; yields its output file."""
    (cwd / "receiver.py").write_text(block.code)
    printed = cwd / "received.txt"
    with printed.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "receiver.py"], cwd=cwd, env=env, stdout=out, stderr=out
        )
        try:
            wait_for_port(port, process)
            yield printed
        finally:
            process.terminate()
            process.wait(timeout=10)


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "receiver.py exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("receiver.py did not listen in 30 s")


def run_python(blocks: list[Block], env: dict[str, str], cwd: Path) -> dict[str, str]:
    """The Python blocks run as the one script they form; each block's output."""
    (cwd / "guide.py").write_text(python_script(blocks))
    done = subprocess.run(
        [sys.executable, "guide.py"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return outputs_by_block(done.stdout, blocks)


def assert_prints(name: str, output: str) -> None:
    for pattern in PRINTS[name]:
        assert re.search(pattern, output, flags=re.M), f"{name}: {pattern!r} not in:\n{output}"


def assert_received(printed: Path) -> None:
    """The receiver prints every expected line (and the MED's refund) within 20 s."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = printed.read_text().splitlines()
        refunds = [line for line in lines if line.startswith("RefundIn CONFIRMED")]
        if set(RECEIVED) <= set(lines) and len(refunds) >= 4:
            return
        time.sleep(0.2)
    raise AssertionError(f"the receiver printed:\n{printed.read_text()}")
