"""Delivery against receivers that misbehave on purpose: redirects, huge or endless answers,
trickled answers, DNS rebinding, cookies. Every receiver is a real socket on 127.0.0.1; only
name resolution (the outside world) is replaced, by a fake `getaddrinfo` on the running loop."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from pixgate.jobs.worker import run_once
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.service import outbox as events
from tests.helpers import make_account
from tests.webhooks.conftest import insert_transaction, make_due
from tests.webhooks.receiver import (
    Receiver,
    Scripted,
    TlsListener,
    body_of,
    endless_chunks,
    endless_continues,
    endless_headers,
    huge_body,
    trickled_body,
    trickled_headers,
)

HOST = "hooks.example.test"
PUBLIC = "93.184.215.14"  # a global unicast address; nothing is ever sent to it here


class FakeDns:
    """Names we choose resolve to addresses we choose; any other name goes to the real
    resolver. `lookups` lists every name looked up through us."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.names: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    async def getaddrinfo(
        self,
        host: Any,
        port: Any,
        *,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[tuple[Any, ...]]:
        name = host.decode() if isinstance(host, bytes) else host  # anyio passes IDNA bytes
        if name not in self.names:
            return list(
                await self.real(host, port, family=family, type=type, proto=proto, flags=flags)
            )
        self.lookups.append(name)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port), 0, 0))
            if ":" in address
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port)))
            for address in self.names[name]
        ]


@pytest.fixture
async def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    loop = asyncio.get_running_loop()
    fake = FakeDns(loop.getaddrinfo)
    monkeypatch.setattr(loop, "getaddrinfo", fake.getaddrinfo)
    return fake


@pytest.fixture
async def other() -> AsyncIterator[Receiver]:
    server = Receiver()
    await server.start()
    yield server
    await server.stop()


def _timeout(rt: Runtime, seconds: float) -> Runtime:
    rt.settings = rt.settings.model_copy(update={"webhook_timeout_s": seconds})
    return rt


async def _deliver_once(rt: Runtime, url: str, *, guard: float = 30.0) -> float:
    """Register `url`, record one cash-out event, run the worker once; the seconds it took.
    `guard` only keeps a regression from hanging the suite."""
    account = await make_account(rt)
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=url)
    async with rt.db.begin() as conn:
        tx = await insert_transaction(conn, account.account_id)
        await events.record(conn, account_id=account.account_id, type="cash_out", transaction_id=tx)
    started = time.monotonic()
    async with asyncio.timeout(guard):
        assert await run_once(rt) == 1
    return time.monotonic() - started


async def _logged(rt: Runtime) -> asyncpg.Record:
    """The only delivery, its only attempt and its job."""
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT d.status, d.attempts, a.status_code, a.duration_ms, a.response_excerpt, "
            "a.error, j.status AS job_status, j.run_at - now() AS retry_in "
            "FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id "
            "JOIN jobs j ON j.kind = 'webhook.deliver'"
        )
    assert row is not None
    return row


async def _hung_up(receiver: Receiver) -> bool:
    """Whether the receiver saw us close every connection (it notices on its next write)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(5):
            while receiver.open_connections:  # noqa: ASYNC110 - polling state we do not own
                await asyncio.sleep(0.02)
    return receiver.open_connections == 0


def _assert_retried(row: asyncpg.Record) -> None:
    """A failed attempt: the delivery stays pending and its job is due again within 10 s."""
    assert (row["status"], row["attempts"], row["job_status"]) == ("pending", 1, "queued")
    assert timedelta(0) < row["retry_in"] <= timedelta(seconds=10)


# --- 1. redirects -----------------------------------------------------------------------------


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
async def test_a_redirect_is_a_failed_attempt_and_its_target_gets_nothing(
    insecure: Runtime, receiver: Receiver, other: Receiver, code: int
) -> None:
    rt = insecure
    receiver.plan("/moved", code, code)
    receiver.answer_headers["/moved"] = {"Location": other.url("/elsewhere")}
    await _deliver_once(rt, receiver.url("/moved"))
    row = await _logged(rt)
    assert row["status_code"] == code
    assert row["error"] == f"redirect to {other.url('/elsewhere')!r} not followed"
    _assert_retried(row)

    await make_due(rt)
    assert await run_once(rt) == 1  # the retry is redirected again and again not followed
    assert [r.path for r in receiver.received] == ["/moved", "/moved"]
    assert (other.connections, other.received) == (0, [])


# --- 2. the answer's body is read up to a cap ---------------------------------------------------


@pytest.mark.parametrize(
    "answer", [huge_body(50 * 2**20), endless_chunks()], ids=["50MB", "endless-chunked"]
)
async def test_a_huge_answer_is_read_only_up_to_the_cap(
    insecure: Runtime, receiver: Receiver, answer: Scripted
) -> None:
    rt = _timeout(insecure, 20.0)
    receiver.plan("/big", answer)
    tracemalloc.start()
    try:
        elapsed = await _deliver_once(rt, receiver.url("/big"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    row = await _logged(rt)
    assert (row["status"], row["status_code"], row["error"]) == ("delivered", 200, None)
    assert row["response_excerpt"] == "x" * 2048
    assert elapsed < 5  # far from the 20 s deadline: the cap ended it, not the clock
    assert peak < 2 * 2**20  # the whole run (worker, client and receiver); measured < 1 MB
    assert await _hung_up(receiver)
    # what got out: one 64 KiB read over the 8 KiB cap, plus what the kernel buffers on
    # loopback (about 4 MB here); never the 50 MB
    assert receiver.sent["/big"] < 20 * 2**20


@pytest.mark.parametrize("char", ["x", "é", "€", "😀"])
async def test_the_excerpt_is_the_first_2048_characters(
    insecure: Runtime, receiver: Receiver, char: str
) -> None:
    receiver.plan("/hook", body_of((char * 5000).encode()))
    attempt = await webhooks.post(
        insecure, url=receiver.url(), body=b"{}", message_id="msg_1", headers={}, secrets=[]
    )
    assert attempt.ok
    assert attempt.excerpt == char * 2048


async def test_endless_headers_are_refused_after_100_kib(
    insecure: Runtime, receiver: Receiver
) -> None:
    rt = _timeout(insecure, 20.0)
    receiver.plan("/hook", endless_headers())
    elapsed = await _deliver_once(rt, receiver.url())
    row = await _logged(rt)
    assert elapsed < 5
    assert row["status_code"] is None
    assert row["error"].startswith("RemoteProtocolError")
    _assert_retried(row)


# --- 3. a total deadline per attempt ------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "status_code"),
    [
        (trickled_headers(0.1), None),
        (trickled_body(0.1), 200),
        (endless_continues(0.1), None),
    ],
    ids=["headers", "body", "100-continue"],
)
async def test_a_trickling_receiver_is_cut_at_the_deadline_and_retried(
    insecure: Runtime, receiver: Receiver, answer: Scripted, status_code: int | None
) -> None:
    """A byte every 0.1 s never trips the 1 s connect/read timeouts; the deadline ends it.
    A 200 whose body does not arrive in time is a failed attempt too."""
    rt = _timeout(insecure, 1.0)
    receiver.plan("/slow", answer)
    elapsed = await _deliver_once(rt, receiver.url("/slow"))
    row = await _logged(rt)
    assert row["status_code"] == status_code
    assert 1.0 <= elapsed < 3.0
    assert 1000 <= row["duration_ms"] < 2500
    assert row["error"] == "timed out: no complete answer within 1 s"
    _assert_retried(row)
    assert await _hung_up(receiver)


# --- 4. DNS rebinding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rebound",
    [
        ["127.0.0.1"],
        ["10.0.0.1"],
        ["169.254.169.254"],
        ["::ffff:127.0.0.1"],
        ["64:ff9b::a00:1"],
        [PUBLIC, "127.0.0.1"],
    ],
)
async def test_a_name_rebound_to_a_private_address_is_refused_at_delivery(
    rt: Runtime, dns: FakeDns, rebound: list[str]
) -> None:
    listener = TlsListener(HOST)
    await listener.start()
    try:
        dns.names[HOST] = [PUBLIC]  # public when registered (insecure setting off)...
        url = f"https://{HOST}:{listener.port}/hook"
        account = await make_account(rt)
        await webhooks.add(rt, account.account_id, event_type="cash_out", url=url)
        async with rt.db.begin() as conn:
            tx = await insert_transaction(conn, account.account_id)
            await events.record(
                conn, account_id=account.account_id, type="cash_out", transaction_id=tx
            )
        dns.names[HOST] = rebound  # ...private when delivered
        dns.lookups.clear()
        assert await run_once(rt) == 1
    finally:
        await listener.stop()
    row = await _logged(rt)
    assert dns.lookups == [HOST]  # resolved again at delivery
    assert row["status_code"] is None
    assert row["error"].startswith(f"destination refused: {HOST} resolves to ")
    assert "private, loopback, link-local" in row["error"]
    assert row["duration_ms"] < 1000
    _assert_retried(row)
    assert listener.connections == 0


async def test_with_insecure_on_the_same_name_connects_with_its_sni(
    insecure: Runtime, dns: FakeDns
) -> None:
    """The control of the test above (the listener does see a connection when one is made),
    and the SNI and certificate check are the registered hostname's, not the address's."""
    listener = TlsListener(HOST)
    await listener.start()
    dns.names[HOST] = ["127.0.0.1"]
    try:
        attempt = await webhooks.post(
            insecure,
            url=f"https://{HOST}:{listener.port}/hook",
            body=b"{}",
            message_id="msg_1",
            headers={},
            secrets=[],
        )
    finally:
        await listener.stop()
    assert (listener.connections, listener.server_names) == (1, [HOST])
    assert attempt.error is not None and "CERTIFICATE_VERIFY_FAILED" in attempt.error
    assert not attempt.ok


async def test_the_host_header_is_the_registered_hostname(
    insecure: Runtime, dns: FakeDns, receiver: Receiver
) -> None:
    dns.names[HOST] = ["127.0.0.1"]
    attempt = await webhooks.post(
        insecure,
        url=receiver.url(host=HOST),
        body=b"{}",
        message_id="msg_1",
        headers={},
        secrets=[],
    )
    assert attempt.ok
    assert receiver.received[0].headers["host"] == f"{HOST}:{receiver.port}"


# --- cookies ----------------------------------------------------------------------------------


async def test_no_cookie_is_kept_or_sent_to_any_receiver(
    insecure: Runtime, receiver: Receiver, other: Receiver
) -> None:
    receiver.answer_headers["/hook"] = {"Set-Cookie": "session=abc; Path=/; Max-Age=3600"}

    async def post(url: str) -> None:
        assert (
            await webhooks.post(
                insecure, url=url, body=b"{}", message_id="msg_1", headers={}, secrets=[]
            )
        ).ok

    await post(receiver.url())
    await post(receiver.url())  # the receiver that set it
    await post(other.url())  # another receiver on the same host (cookies ignore ports)
    assert [r.headers.get("cookie") for r in receiver.received + other.received] == [None] * 3
    assert not webhooks.http_client().cookies
