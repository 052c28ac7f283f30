"""What tests/test_secrets_in_logs.py hunts with: a real `pixgate serve` whose every
written byte is kept, the secrets to look for (whole and in pieces), a recorder of every
request and error answer, and certificates and tokens as an attacker or a confused client
has them."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from cryptography.x509.oid import NameOID
from fastapi.routing import APIRoute

from pixgate.routers import ROUTERS
from tests.processes import PIXGATE, running

SETTINGS = {
    "PIXGATE_LOG_LEVEL": "DEBUG",
    "PIXGATE_LOG_JSON": "true",
    "PIXGATE_WEBHOOK_API_ENABLED": "true",
    "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
    "PIXGATE_SETTLEMENT_DELAY_MS": "0",
}
CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"
EMAIL_KEY = "maria.silva@example.com"
TXID = "logs" + "A" * 10 + "1234567890" + "zz"  # 26 characters
MIN_PIECE = 16
"""Shorter pieces of a secret (a PEM's last base64 line) could appear by chance."""


# --- a real server, its worker in-process, every byte it writes kept ------------------------


def environment(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    return env | {"PIXGATE_DATABASE_URL": database_url} | SETTINGS


SERVE = [PIXGATE, "serve"]

CRASHING_SERVE = [
    sys.executable,
    "-c",
    """
import os, structlog
from pixgate.accounts.service import balances
from pixgate.cli import app

real_get = balances.get

async def get(rt, account_id):
    if structlog.contextvars.get_contextvars().get("request_id") == "crash-on-purpose":
        raise RuntimeError(os.environ["CRASH_MESSAGE"])
    return await real_get(rt, account_id)

balances.get = get
app()
""",
    "serve",
]
"""`pixgate serve` exactly, but a balance read crashes (a RuntimeError carrying secrets) when
its request id is `crash-on-purpose`: the 500 no route gives any more, on demand."""


@contextmanager
def serving_with_worker(
    env: dict[str, str], log_path: Path, command: list[str] = SERVE
) -> Iterator[str]:
    """`pixgate serve` (worker included), stdout and stderr into `log_path`; stopped with
    SIGTERM, so it logs its shutdown too."""
    with log_path.open("wb") as output, running(command, env, output=output) as base:
        yield base


@dataclass
class Cli:
    env: dict[str, str]
    stderr: list[str] = field(default_factory=list)

    def __call__(self, *args: str) -> Any:
        done = subprocess.run(
            [PIXGATE, *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        self.stderr.append(done.stderr)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout


# --- what we look for --------------------------------------------------------------------


@dataclass
class Secrets:
    needles: dict[str, str] = field(default_factory=dict)
    """secret value (or a piece of one) -> what it is"""

    def add(self, label: str, value: str) -> None:
        assert len(value) >= 8, (label, value)
        self.needles.setdefault(value, label)

    def pem(self, label: str, pem: str) -> None:
        """The PEM whole, as JSON would escape it, and each base64 line, raw and
        percent-encoded (a header cut in the middle would still show them)."""
        self.add(label, pem)
        self.add(f"{label} (JSON-escaped)", json.dumps(pem)[1:-1])
        lines = [line for line in pem.splitlines() if line and not line.startswith("-----")]
        for number, line in enumerate(lines, 1):
            if len(line) >= MIN_PIECE:
                self.add(f"{label}, base64 line {number}", line)
                self.add(f"{label}, base64 line {number}, percent-encoded", quote(line, safe=""))

    def certificate(self, label: str, pem: str) -> None:
        self.pem(label, pem)
        self.add(f"{label} as X-SSL-Client-Cert", quote(pem, safe=""))

    def token(self, label: str, token: str) -> None:
        self.add(label, token)
        self.add(f"{label}, signature", token.rsplit(".", 1)[1])

    def leaks(self, texts: list[str]) -> str:
        """Each secret found, with the text around it; empty when none is."""
        found = []
        for text in texts:
            for value, label in self.needles.items():
                at = text.find(value)
                if at >= 0:
                    found.append(f"- {label}: ...{text[max(0, at - 120) : at + 40]!r}...")
        return "\n".join(found)


# --- every request recorded: the route it hit, and its answer when it is an error ----------


def api_routes() -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }


@dataclass
class Recorder:
    routes: list[APIRoute] = field(
        default_factory=lambda: [
            r for router in ROUTERS for r in router.routes if isinstance(r, APIRoute)
        ]
    )
    called: set[tuple[str, str]] = field(default_factory=set)
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)

    async def on_request(self, request: httpx.Request) -> None:
        self.requests += 1
        for route in self.routes:
            if request.method in route.methods and route.path_regex.match(request.url.path):
                self.called.add((request.method, route.path))

    async def on_response(self, response: httpx.Response) -> None:
        status = response.status_code
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status >= 400:
            await response.aread()
            self.errors.append(
                f"{response.request.method} {response.request.url.path} -> {status}\n"
                f"{dict(response.headers)}\n{response.text}"
            )

    def client(self, base: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=base,
            timeout=30,
            event_hooks={"request": [self.on_request], "response": [self.on_response]},
        )


# --- certificates and tokens the way an attacker or a confused client has them -----------


def self_signed(not_before: datetime, not_after: datetime) -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "someone else")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(Encoding.PEM).decode(),
        key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode(),
    )


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def alg_none(token: str) -> str:
    header = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{header}.{token.split('.')[1]}."


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


@dataclass
class Log:
    lines: list[str]
    entries: list[dict[str, Any]]
    levels: dict[str, int]


def read_log(log_path: Path) -> Log:
    """The whole output, which must be there, be JSON lines only (the standard library's
    records too) and include DEBUG lines: logs that vanish or go around the processors
    would make the search for secrets pointless."""
    lines = [line for line in log_path.read_text().splitlines() if line.strip()]
    assert lines, "pixgate serve wrote no log at all"
    found, levels = [], {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"a log line that is not JSON: {line[:300]}") from None
        found.append(entry)
        levels[entry.get("level", "?")] = levels.get(entry.get("level", "?"), 0) + 1
    assert levels.get("debug", 0) > 0, levels
    return Log(lines, found, levels)


def entries(log_path: Path) -> list[dict[str, Any]]:
    """The JSON lines written so far (a line being written may be cut: skipped)."""
    found = []
    for line in log_path.read_text().splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            continue
    return found


async def logged(log_path: Path, event: str, level: str, count: int) -> None:
    """Until `count` lines of `event` at `level` are in the log (20 s at most)."""
    deadline = time.monotonic() + 20
    while (
        sum(1 for e in entries(log_path) if e.get("event") == event and e.get("level") == level)
        < count
    ):
        assert time.monotonic() < deadline, f"fewer than {count} {event} lines at {level}"
        await asyncio.sleep(0.1)
