"""Real `pixgate serve` processes on the test database, for what only several processes show
(revocation reaching every process, rate limits shared through Redis, the nginx front)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

import httpx

PIXGATE = str(Path(sys.executable).with_name("pixgate"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    command: list[str], env: dict[str, str], *, output: IO[bytes] | int = subprocess.DEVNULL
) -> Iterator[str]:
    """`command` (a `pixgate serve` line, without `--port`) on a free port; yields its base URL
    once /readyz answers, and stops it with SIGTERM, as an operator's supervisor does."""
    with started(command, env, output=output) as (base, _):
        yield base


@contextmanager
def started(
    command: list[str], env: dict[str, str], *, output: IO[bytes] | int = subprocess.DEVNULL
) -> Iterator[tuple[str, int]]:
    """`running`, also yielding the process id (a single-process `pixgate serve` is the API
    process itself, whose memory a test can read)."""
    port = free_port()
    process = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stdout=output, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, "pixgate serve exited during start-up"
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            raise AssertionError("pixgate serve did not become ready in 60 s")
        yield base, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


SERVE = [PIXGATE, "serve", "--no-worker"]


def server_env(database_url: str, **settings: str) -> dict[str, str]:
    """This environment without its PIXGATE_ settings, then the test database and `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env |= {"PIXGATE_DATABASE_URL": database_url, "PIXGATE_LOG_JSON": "true"}
    env |= {f"PIXGATE_{name.upper()}": value for name, value in settings.items()}
    return env


@contextmanager
def serving(database_url: str, **settings: str) -> Iterator[str]:
    """One `pixgate serve --no-worker` on the test database; yields its base URL."""
    with running(SERVE, server_env(database_url, **settings)) as base:
        yield base


@contextmanager
def serving_process(database_url: str, **settings: str) -> Iterator[tuple[str, int]]:
    """`serving`, also yielding the API process's id."""
    with started(SERVE, server_env(database_url, **settings)) as served:
        yield served


@contextmanager
def serving_many(count: int, database_url: str, **settings: str) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [stack.enter_context(serving(database_url, **settings)) for _ in range(count)]
