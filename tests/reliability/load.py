"""Cash-outs sent through a real `pixgate serve` while its database fails, and what must hold
afterwards: the pieces the outage and failover tests share.

Each client sends cash-outs one after another and sends a refused one again, with the same
externalId, until it is accepted: what an integrator following Retry-After does."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from tests.helpers import cert_header
from tests.processes import PIXGATE, running

CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"
LATENCY_BOUND_S = 10.0
"""No request waits longer, database down or not."""


def order(external_id: str) -> dict[str, Any]:
    return {
        "value": 1.23,
        "externalId": external_id,
        "description": "database fault",
        "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
    }


def assert_unavailable_envelope(response: httpx.Response) -> None:
    """The full envelope of the cash-out route, 503 SERVICE_UNAVAILABLE, with Retry-After."""
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["statusCode"] == 503
    assert body["code"] == "SERVICE_UNAVAILABLE", body
    assert body["error"] == "Service Unavailable"
    assert body["userMessage"] and isinstance(body["message"], str)
    assert body["errorId"] == response.headers["x-request-id"]
    assert "errorCode" not in body, "not a business error"
    assert int(response.headers["retry-after"]) >= 1


@dataclass
class Gateway:
    base: str
    env: dict[str, str]
    account: dict[str, Any]
    headers: dict[str, str]
    log: Path

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PIXGATE, *args], env=self.env, capture_output=True, text=True, timeout=120
        )


@contextmanager
def serving(env: dict[str, str], log: Path, *, webhook: str | None = None) -> Iterator[Gateway]:
    """`pixgate serve`, with its in-process worker, on `env`'s database, migrated, with one
    funded account whose limits are out of the way (and whose cash-outs are notified to
    `webhook`), and a token for it."""

    def cli(*args: str) -> str:
        done = subprocess.run(
            [PIXGATE, *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli("db", "upgrade")
    account = json.loads(
        cli("accounts", "create", "--name", "Faults Ltda", "--balance", "100000.00", "--json")
    )
    limit = "100000000"
    cli(
        "accounts",
        "update",
        str(account["accountId"]),
        *("--transaction-limit", limit, "--daily-limit", limit, "--night-limit", limit),
    )
    if webhook is not None:
        account_id = str(account["accountId"])
        cli("webhooks", "add", "--account", account_id, "--event", "cash_out", "--url", webhook)
    with log.open("wb") as output, running([PIXGATE, "serve"], env, output=output) as base:
        headers = signed_in(base, account)
        yield Gateway(base=base, env=env, account=account, headers=headers, log=log)


def signed_in(base: str, account: dict[str, Any]) -> dict[str, str]:
    """The headers of `account`'s requests: its certificate as nginx forwards it, and a token
    the gateway at `base` issued."""
    certificate = {"X-SSL-Client-Cert": cert_header(account["certificatePem"])}
    token = httpx.post(
        f"{base}/api/auth/token",
        json={"clientId": account["clientId"], "clientSecret": account["clientSecret"]},
        headers=certificate,
    )
    assert token.status_code == 201, token.text
    return {"Authorization": f"Bearer {token.json()['access_token']}", **certificate}


@dataclass
class Attempt:
    external_id: str
    started: float
    elapsed: float
    status: int | None  # None: no HTTP answer (the connection failed)
    code: str | None = None


@dataclass
class Load:
    """Clients that each send cash-outs one after another, sending a refused one again with
    the same externalId until it is accepted; and a probe of /readyz."""

    gateway: Gateway
    stop: threading.Event = field(default_factory=threading.Event)
    attempts: list[Attempt] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)
    surprises: list[str] = field(default_factory=list)
    probes: list[tuple[float, float, httpx.Response]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    threads: list[threading.Thread] = field(default_factory=list)

    def start(self, clients: int) -> None:
        self.threads = [threading.Thread(target=self.client, args=(n,)) for n in range(clients)]
        self.threads.append(threading.Thread(target=self.probe))
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=150)
        assert not any(thread.is_alive() for thread in self.threads), "a client hung"

    def client(self, number: int) -> None:
        deadline = time.monotonic() + 120
        with httpx.Client(base_url=self.gateway.base, headers=self.gateway.headers) as http:
            sent = 0
            while not self.stop.is_set():
                sent += 1
                external_id = f"fault-{number}-{sent}-{uuid.uuid4().hex[:6]}"
                while time.monotonic() < deadline and not self._send(http, external_id):
                    # Sooner than Retry-After asks, to press the gateway during the outage.
                    time.sleep(0.2)

    def _send(self, http: httpx.Client, external_id: str) -> bool:
        """True once `external_id` is acknowledged (or refused for good)."""
        started = time.monotonic()
        try:
            response = http.post("/api/pix/cash-out", json=order(external_id), timeout=30)
        except httpx.TransportError as exc:
            self._record(Attempt(external_id, started, time.monotonic() - started, None))
            self._surprise(f"{external_id}: no answer: {exc!r}")
            return False
        elapsed = time.monotonic() - started
        code = None if response.status_code < 400 else response.json().get("code")
        self._record(Attempt(external_id, started, elapsed, response.status_code, code))
        if response.status_code == 201:
            with self.lock:
                self.acknowledged.add(external_id)
            return True
        if code == "PIX_DUPLICATE_EXTERNAL_ID":  # an earlier attempt's commit did land
            with self.lock:
                self.acknowledged.add(external_id)
            return True
        if response.status_code == 503:
            try:
                assert_unavailable_envelope(response)
            except (AssertionError, KeyError, ValueError) as exc:
                self._surprise(f"{external_id}: bad 503 {response.text!r}: {exc}")
            return False
        self._surprise(f"{external_id}: {response.status_code} {response.text}")
        return True

    def probe(self) -> None:
        with httpx.Client(base_url=self.gateway.base) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                response = http.get("/readyz", timeout=30)
                with self.lock:
                    self.probes.append((started, time.monotonic() - started, response))
                time.sleep(0.2)

    def first_accepted_after(self, moment: float, timeout: float = 60.0) -> float | None:
        """When the first cash-out sent after `moment` was accepted, waiting up to `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = [
                    a.started + a.elapsed
                    for a in self.attempts
                    if a.started > moment and a.status == 201
                ]
            if found:
                return min(found)
            time.sleep(0.1)
        return None

    def _record(self, attempt: Attempt) -> None:
        with self.lock:
            self.attempts.append(attempt)

    def _surprise(self, what: str) -> None:
        with self.lock:
            self.surprises.append(what)


def assert_only_unavailable(load: Load, *outages: tuple[float, float]) -> str:
    """Each outage (from the database going away until it was back): 503s in the envelope,
    never another error, nothing slow, and /readyz saying so while it lasted; a 503 outside
    them fails. A summary of what the clients met."""
    assert load.surprises == [], load.surprises[:10]

    def during(moment: float) -> bool:
        return any(down - 1 <= moment <= up + 5 for down, up in outages)

    def met_an_outage(attempt: Attempt) -> bool:
        """Answered after an outage began (a request in flight then, however long it had
        been waiting on a busy host, meets it) and sent before it was over."""
        answered = attempt.started + attempt.elapsed
        return any(down <= answered and attempt.started <= up + 5 for down, up in outages)

    refused = [a for a in load.attempts if a.status == 503]
    assert refused, "no request met the outage"
    outside = [a for a in refused if not met_an_outage(a)]
    first_down = min(down for down, _ in outages)
    assert outside == [], (
        "503s outside the outage (sent and answered, s from the first outage; code): "
        + str(
            [
                (
                    round(a.started - first_down, 2),
                    round(a.started + a.elapsed - first_down, 2),
                    a.code,
                )
                for a in outside[:10]
            ]
        )
    )
    slowest = max(a.elapsed for a in load.attempts)
    assert slowest < LATENCY_BOUND_S, f"a cash-out took {slowest:.1f} s"
    assert max(elapsed for _, elapsed, _ in load.probes) < LATENCY_BOUND_S
    unready = [(t, r) for t, _, r in load.probes if r.status_code != 200]
    assert all(r.status_code == 503 and during(t) for t, r in unready), "/readyz outside"
    assert all(r.json()["status"] == "unavailable" for _, r in unready)
    assert all(int(r.headers["retry-after"]) >= 1 for _, r in unready)
    for down, up in outages:
        inside = [r for t, _, r in load.probes if down + 0.5 < t < up - 0.5]
        assert all(r.status_code == 503 for r in inside), "/readyz ready while down"
        if up - down > 2:
            assert inside, "/readyz was not asked during the outage"
    duplicates = sum(a.code == "PIX_DUPLICATE_EXTERNAL_ID" for a in load.attempts)
    return (
        f"{len(load.attempts)} cash-out requests, {len(refused)} answered 503, "
        f"{len(load.acknowledged)} acknowledged ({duplicates} as duplicates); slowest "
        f"{slowest * 1000:.0f} ms, 503 slowest {max(a.elapsed for a in refused) * 1000:.0f} ms; "
        f"readyz 503 x{len(unready)}"
    )


def rows(database_url: str, account_id: int) -> list[asyncpg.Record]:
    async def fetch() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(database_url)
        try:
            return await conn.fetch(
                "SELECT external_id, status, transaction_id FROM transactions"
                " WHERE account_id = $1",
                account_id,
            )
        finally:
            await conn.close()

    return asyncio.run(fetch())


def settled_rows(database_url: str, account_id: int, timeout: float = 60.0) -> list[asyncpg.Record]:
    """The account's transactions once none is PENDING; asserts that happens within `timeout`,
    naming the settlement jobs of those that did not (their state tells why)."""
    deadline = time.monotonic() + timeout
    while True:
        found = rows(database_url, account_id)
        pending = [r["external_id"] for r in found if r["status"] == "PENDING"]
        if not pending:
            return found
        if time.monotonic() >= deadline:
            jobs = settle_jobs(database_url, account_id)
            raise AssertionError(f"{len(pending)} cash-outs never settled; their jobs: {jobs}")
        time.sleep(0.5)


def settle_jobs(database_url: str, account_id: int) -> list[dict[str, object]]:
    """The settlement jobs of the account's PENDING transactions, as the database has them."""

    async def fetch() -> list[dict[str, object]]:
        conn = await asyncpg.connect(database_url)
        try:
            found = await conn.fetch(
                "SELECT t.external_id, t.created_at, j.id, j.status, j.attempts, j.run_at,"
                " j.locked_until, j.finished_at, j.last_error, now() AS now"
                " FROM transactions t LEFT JOIN jobs j ON j.kind = 'payouts.settle'"
                " AND j.args->>'transaction_id' = t.id::text"
                " WHERE t.account_id = $1 AND t.status = 'PENDING'",
                account_id,
            )
            return [dict(row) for row in found]
        finally:
            await conn.close()

    return asyncio.run(fetch())


def wait_for_jobs(database_url: str, timeout: float = 60.0) -> None:
    """Until no job is queued or running (settlements, webhook deliveries)."""

    async def busy() -> int:
        conn = await asyncpg.connect(database_url)
        try:
            count: int = await conn.fetchval(
                "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
            )
            return count
        finally:
            await conn.close()

    deadline = time.monotonic() + timeout
    while (left := asyncio.run(busy())) > 0:
        assert time.monotonic() < deadline, f"{left} jobs still queued or running"
        time.sleep(0.5)


def assert_consistent(load: Load, stored: list[asyncpg.Record]) -> None:
    """No externalId paid twice, nothing stored that nobody sent, every payment final, and
    the ledger verifies."""
    external_ids = [r["external_id"] for r in stored]
    assert len(external_ids) == len(set(external_ids)), "an externalId was paid twice"
    assert set(external_ids) <= {a.external_id for a in load.attempts}
    assert {r["status"] for r in stored} <= {"CONFIRMED", "ERROR"}
    verify = load.gateway.cli("ledger", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
