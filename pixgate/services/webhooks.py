"""Webhooks: configuration, signing secrets, delivery attempts, resend, and the event list.

The POST to a receiver always happens outside any database transaction: the deliverer
reads what it needs in one short transaction, POSTs, then logs the attempt in another.
Every connection goes through `_GuardedBackend`, which resolves the host and refuses
private, loopback, link-local, multicast and reserved addresses on the very
addresses it then connects to, so a DNS change between check and connect cannot slip by.

A receiver cannot hold or flood us either: redirects are not followed, no cookie is kept,
at most `_READ_LIMIT_BYTES` of an answer's body is read (the connection is then dropped),
and a whole attempt (connect, send, answer) ends at `webhook_timeout_s`, however slowly
the receiver trickles bytes (tests/webhooks/test_hostile_receivers.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import random
import socket
import time
import weakref
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg
import httpcore
import httpx
import orjson
import structlog

from pixgate.db import webhooks as rows
from pixgate.db.pool import Connection
from pixgate.domain import webhooks as rules
from pixgate.domain.errors import (
    Conflict,
    InvalidWebhookConfig,
    NotFound,
    NoWebhookDestination,
    UnsafeWebhookDestination,
    ValidationFailed,
    WebhookLimitReached,
)
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

USER_AGENT = "pixgate-webhooks/0.1"
_READ_LIMIT_BYTES = rules.EXCERPT_CHARS * 4


# --- the HTTP client ------------------------------------------------------------------------

_allow_loopback: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "webhook_allow_loopback", default=False
)


async def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (an IP literal resolves to itself)."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UnsafeWebhookDestination(f"{host} does not resolve: {exc.strerror}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _NoCookies(httpx.Cookies):
    """A jar that keeps nothing: no receiver's Set-Cookie is stored, none is ever sent, so
    no state passes between attempts, receivers or accounts. Overriding these two (not
    only refusing in a cookiejar policy) also skips httpx's per-response cookie parsing."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to addresses that pass the destination rules."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                addresses = await resolve(host, port)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        rules.check_addresses(host, addresses, allow_insecure=_allow_loopback.get())
        failure: Exception = httpcore.ConnectError(f"no address of {host} answered")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not webhook destinations")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


@dataclass(slots=True)
class _Gate:
    slots: asyncio.Semaphore
    users: int = 0


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[rules.Destination, _Gate]] = (
    weakref.WeakKeyDictionary()
)


@asynccontextmanager
async def _destination_slot(destination: rules.Destination, limit: int) -> AsyncIterator[None]:
    """At most `limit` POSTs in flight to one destination from this event loop; the others
    wait here, in arrival order.

    Beyond bounding what one receiver gets at once, this keeps httpcore's pool small: the pool
    walks all its connections for each idle one on every request and every response
    (O(n^2)), so a burst of deliveries that opened 200 connections made every later POST
    slower, the backlog longer and the burst larger (docs/performance.md, "Webhook POSTs per
    destination")."""
    gates = _gates.setdefault(asyncio.get_running_loop(), {})
    gate = gates.get(destination)
    if gate is None:
        gate = gates[destination] = _Gate(asyncio.Semaphore(limit))
    gate.users += 1
    try:
        async with gate.slots:
            yield
    finally:
        gate.users -= 1
        if gate.users == 0:
            del gates[destination]


def http_client() -> httpx.AsyncClient:
    """One pooled client per event loop (the CLI runs several loops in one process).

    No redirects (a redirect is a failed delivery: it could point anywhere), no proxies
    from the environment (a proxy would bypass the destination checks), no cookies.
    """
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        transport = httpx.AsyncHTTPTransport(trust_env=False)
        transport._pool = httpcore.AsyncConnectionPool(  # the only way to pass a backend
            ssl_context=httpx.create_ssl_context(),
            max_connections=200,
            max_keepalive_connections=50,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(),
        )
        client = httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)
        client._cookies = _NoCookies()  # the `cookies=` argument would be copied into a jar
        _clients[loop] = client
    return client


async def check_url(rt: Runtime, url: str) -> None:
    """The destination rules at registration (and for a resend's temporary URL): scheme, then
    every address."""
    allow = rt.settings.allow_insecure_webhooks
    destination = rules.parse_destination(url, allow_insecure=allow)
    addresses = await resolve(destination.host, destination.port)
    rules.check_addresses(destination.host, addresses, allow_insecure=allow)


@dataclass(frozen=True, slots=True)
class Attempt:
    sent_at: datetime
    status_code: int | None
    duration_ms: int
    excerpt: str | None
    error: str | None
    retry_after: float | None

    @property
    def ok(self) -> bool:
        """A 2xx answered in full (up to the read cap) within the deadline; a 2xx whose
        answer then timed out or broke off is retried, like any network error."""
        return (
            self.error is None
            and self.status_code is not None
            and rules.is_success(self.status_code)
        )


async def _read_excerpt(response: httpx.Response) -> str:
    """At most `_READ_LIMIT_BYTES` of the raw answer (each read brings up to 64 KiB), kept
    as the first `EXCERPT_CHARS` characters: a receiver cannot make us buffer a big body.
    4 bytes per character at most, so the cut never changes the excerpt."""
    buffer = b""
    async for chunk in response.aiter_raw():
        buffer += chunk[: _READ_LIMIT_BYTES - len(buffer)]
        if len(buffer) >= _READ_LIMIT_BYTES:
            break
    return rules.excerpt(buffer.decode("utf-8", errors="replace"))


async def post(
    rt: Runtime,
    *,
    url: str,
    body: bytes,
    message_id: str,
    headers: dict[str, str],
    secrets: Sequence[str],
) -> Attempt:
    """One signed POST. Never raises for the receiver's faults: they become the Attempt.

    It is signed, timed and stamped once its destination has a free slot, so neither the
    attempt's duration nor `webhook-timestamp` counts the wait for one.
    """
    allow = rt.settings.allow_insecure_webhooks
    try:
        destination = rules.parse_destination(url, allow_insecure=allow)
    except (UnsafeWebhookDestination, InvalidWebhookConfig) as exc:
        return Attempt(rt.clock.now(), None, 0, None, f"destination refused: {exc.message}", None)
    async with _destination_slot(destination, rt.settings.webhook_concurrency_per_destination):
        return await _post_now(rt, url, body, message_id, headers, secrets)


async def _post_now(
    rt: Runtime,
    url: str,
    body: bytes,
    message_id: str,
    headers: dict[str, str],
    secrets: Sequence[str],
) -> Attempt:
    """`webhook-timestamp` is the real wall clock (receivers compare it with theirs), not the
    injectable clock, which only drives our own scheduling.

    `webhook_timeout_s` bounds the whole attempt, from resolving the host to the last byte
    of the excerpt: httpx's connect, read and write timeouts (the same value) only bound
    each step, and a receiver sending a byte every few seconds never trips them."""
    timestamp = int(time.time())
    request_headers = {
        **headers,
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.signature_header(secrets, message_id, timestamp, body),
    }
    sent_at = rt.clock.now()
    started = time.monotonic()
    token = _allow_loopback.set(rt.settings.allow_insecure_webhooks)
    status_code: int | None = None
    text: str | None = None
    error: str | None = None
    retry_after: float | None = None
    limit = rt.settings.webhook_timeout_s
    try:
        async with (
            asyncio.timeout(limit),
            http_client().stream(
                "POST",
                url,
                content=body,
                headers=request_headers,
                timeout=limit,
            ) as response,
        ):
            status_code = response.status_code
            text = await _read_excerpt(response)
            retry_after = rules.parse_retry_after(response.headers.get("retry-after"), sent_at)
            if 300 <= status_code < 400:
                error = f"redirect to {response.headers.get('location')!r} not followed"
    except TimeoutError:  # the attempt's deadline (httpx's own timeouts are HTTPErrors)
        error = f"timed out: no complete answer within {limit:g} s"
    except UnsafeWebhookDestination as exc:  # an address refused by _GuardedBackend
        error = f"destination refused: {exc.message}"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    finally:
        _allow_loopback.reset(token)
    duration_ms = round((time.monotonic() - started) * 1000)
    return Attempt(sent_at, status_code, duration_ms, text, error, retry_after)


# --- configuration --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoint:
    id: int
    account_id: int
    event_type: str
    url: str
    headers: dict[str, str]
    version: str
    is_active: bool
    created_at: datetime

    @classmethod
    def from_row(cls, row: asyncpg.Record) -> Endpoint:
        return cls(
            row["id"],
            row["account_id"],
            row["event_type"],
            row["url"],
            row["headers"],
            row["version"],
            row["is_active"],
            row["created_at"],
        )


@dataclass(frozen=True, slots=True)
class AddedEndpoint:
    endpoint: Endpoint
    created: bool


async def add(
    rt: Runtime,
    account_id: int,
    *,
    event_type: str,
    url: str,
    headers: Sequence[tuple[str, str]] = (),
    version: str = "v1",
) -> AddedEndpoint:
    """Register a URL for an event type (4.9); the same URL again updates headers and version."""
    rules.check_event_type(event_type)
    rules.check_version(version, event_type)
    clean_headers = rules.check_headers(headers)
    await check_url(rt, url)
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        existing = await rows.find_endpoint(conn, account_id, event_type, url)
        if existing is not None:
            row = await rows.update_endpoint(conn, existing["id"], clean_headers, version)
            return AddedEndpoint(Endpoint.from_row(row), created=False)
        if await rows.count_active(conn, account_id, event_type) >= rules.MAX_ACTIVE_PER_EVENT:
            raise WebhookLimitReached(
                f"{event_type} already has {rules.MAX_ACTIVE_PER_EVENT} active URLs"
            )
        row = await rows.insert_endpoint(conn, account_id, event_type, url, clean_headers, version)
    return AddedEndpoint(Endpoint.from_row(row), created=True)


async def list_endpoints(rt: Runtime, account_id: int) -> list[Endpoint]:
    async with rt.db.connection() as conn:
        if not await rows.account_exists(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        return [Endpoint.from_row(r) for r in await rows.list_endpoints(conn, account_id)]


async def remove(rt: Runtime, endpoint_id: int) -> None:
    """Delete an endpoint (operator command); its pending deliveries are marked failed."""
    async with rt.db.begin() as conn:
        if not await rows.delete_endpoint(conn, endpoint_id):
            raise NotFound(f"webhook {endpoint_id} not found")


async def _signing_secrets(conn: Connection, account_id: int) -> list[str]:
    """Live secrets; the first delivery of an account creates its secret (shown on request)."""
    found = await rows.signing_secrets(conn, account_id)
    if not found:
        await rows.create_secret_if_missing(conn, account_id, rules.new_secret())
        found = await rows.signing_secrets(conn, account_id)
    return found


async def reveal_secret(rt: Runtime, account_id: int) -> str:
    """The account's signing secret, shown once; afterwards only a rotation shows one."""
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        await rows.create_secret_if_missing(conn, account_id, rules.new_secret())
        secret = await rows.reveal_secret(conn, account_id)
    if secret is None:
        raise Conflict("the webhook secret was already shown; rotate it to get a new one")
    return secret


async def rotate_secret(rt: Runtime, account_id: int) -> str:
    """A new secret; the old one keeps signing for `webhook_secret_overlap_s` (both sign)."""
    secret = rules.new_secret()
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        await rows.rotate_secret(conn, account_id, secret, rt.settings.webhook_secret_overlap_s)
    return secret


# --- delivery -------------------------------------------------------------------------------


def _body(row: asyncpg.Record) -> bytes:
    event = rules.EventFacts(
        row["event_id"], row["event_type"], row["event_created_at"], row["data"]
    )
    return orjson.dumps(rules.render(event, row["version"]))


async def _post_delivery(rt: Runtime, row: asyncpg.Record, secrets: Sequence[str]) -> Attempt:
    return await post(
        rt,
        url=row["url"],
        body=_body(row),
        message_id=row["message_id"],
        headers=row["headers"],
        secrets=secrets,
    )


async def deliver(rt: Runtime, delivery_id: int) -> float | None:
    """One automatic attempt of a pending delivery; returns the seconds until the next try,
    or None when it is settled (delivered, failed after the retry window, or not pending).

    Every statement here is its own transaction (reads, an insert that does nothing if
    the secret exists, the attempt's log with the delivery's move): three round trips, not
    seven with BEGIN and COMMIT around them, on the path of every webhook."""
    async with rt.db.connection() as conn:
        row = await rows.load_delivery(conn, delivery_id)
        if row is None or row["status"] != "pending":
            return None
        secrets = await _signing_secrets(conn, row["account_id"])
    attempt = await _post_delivery(rt, row, secrets)
    now = rt.clock.now()
    delay: float | None = None
    next_at: datetime | None = None
    if attempt.ok:
        status = "delivered"
    elif rules.gives_up(row["created_at"], now):
        status = "failed"
    else:
        status = "pending"
        delay = rules.next_delay(
            row["attempts"] + 1,
            random.random(),
            status_code=attempt.status_code,
            retry_after=attempt.retry_after,
        )
        next_at = now + timedelta(seconds=delay)
    async with rt.db.connection() as conn:
        await _log(conn, row["id"], row["url"], attempt, "delivery", status, next_at)
    # every attempt is in webhook_attempts; the log line (a JSON render and a write each)
    # is for the ones that did not arrive, like the access log's (docs/performance.md,
    # "A quiet access log")
    emit = log.debug if attempt.ok else log.info
    emit(
        "webhook.attempted",
        delivery_id=delivery_id,
        status=status,
        status_code=attempt.status_code,
        error=attempt.error,
        retry_in=delay,
    )
    return delay


async def _log(
    conn: Connection,
    delivery_id: int,
    url: str,
    attempt: Attempt,
    trigger: str,
    status: str | None,
    next_at: datetime | None = None,
) -> int:
    return await rows.log_attempt(
        conn,
        delivery_id=delivery_id,
        url=url,
        trigger=trigger,
        status_code=attempt.status_code,
        duration_ms=attempt.duration_ms,
        response_excerpt=attempt.excerpt,
        error=attempt.error,
        sent_at=attempt.sent_at,
        new_status=status,
        next_attempt_at=next_at,
    )


# --- resend (4.11): one synchronous attempt -------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResendResult:
    webhook_log_id: int
    status_code: int | None
    sent_at: datetime
    message: str


EVENT_ID_PREFIX = "evt_"


async def _find_event(conn: Connection, account_id: int, identifier: str) -> int:
    """The event a resend re-emits: `evt_<id>`, or the latest event of the transaction named
    by numeric id, UUID transactionId, end-to-end id or externalId."""
    event_number = _bigint(identifier.removeprefix(EVENT_ID_PREFIX))
    if identifier.startswith(EVENT_ID_PREFIX) and event_number is not None:
        event_id = await rows.event_of_account(conn, account_id, event_number)
        if event_id is None:
            raise NotFound(f"event {identifier} not found")
        return event_id
    numeric = _bigint(identifier)
    try:
        uuid: str | None = str(UUID(identifier))
    except ValueError:
        uuid = None
    transaction_id = await rows.find_transaction(
        conn, account_id, numeric_id=numeric, uuid=uuid, text=identifier
    )
    if transaction_id is None:
        raise NotFound(f"transaction {identifier} not found")
    event_id = await rows.latest_event_of(conn, account_id, transaction_id)
    if event_id is None:
        raise ValidationFailed(f"transaction {identifier} has no webhook event yet (still pending)")
    return event_id


def _bigint(text: str) -> int | None:
    """`text` as an id PostgreSQL's bigint holds, or None: then it is looked up as text (an
    externalId). `str.isdigit` alone takes superscripts such as `²`, which `int` refuses."""
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


def _resend_message(attempt: Attempt) -> str:
    if attempt.ok:
        return "Webhook resent successfully"
    if attempt.status_code is not None and not rules.is_success(attempt.status_code):
        return f"Webhook resent; the destination answered {attempt.status_code}"
    return f"Webhook could not be delivered: {attempt.error}"


async def resend(rt: Runtime, account_id: int, identifier: str, url: str | None) -> ResendResult:
    """One synchronous attempt to `url`, or to every active URL of the event's type; the answer
    is the first URL's, and every attempt is logged. A success settles a pending or failed
    delivery (its scheduled retry then finds nothing to do)."""
    if url is not None:
        await check_url(rt, url)
    async with rt.db.begin() as conn:
        event_id = await _find_event(conn, account_id, identifier)
        if url is not None:
            version = await rows.event_endpoint_version(conn, event_id)
            targets = [(await rows.temporary_delivery(conn, event_id, url, version), True)]
        else:
            found = await rows.resend_deliveries(conn, event_id)
            targets = [(r["id"], r["inserted"]) for r in found]
            if not targets:
                raise NoWebhookDestination(
                    "no url given and no active webhook configured for this event type"
                )
        secrets = await _signing_secrets(conn, account_id)
        loaded = [await rows.load_delivery(conn, delivery_id) for delivery_id, _ in targets]
    deliveries = [row for row in loaded if row is not None]
    attempts = await asyncio.gather(*(_post_delivery(rt, row, secrets) for row in deliveries))
    log_ids: list[int] = []
    async with rt.db.begin() as conn:
        for (_, fresh), row, attempt in zip(targets, deliveries, attempts, strict=True):
            status = "delivered" if attempt.ok else ("failed" if fresh else None)
            log_ids.append(await _log(conn, row["id"], row["url"], attempt, "resend", status))
    first = attempts[0]
    return ResendResult(log_ids[0], first.status_code, first.sent_at, _resend_message(first))


# --- the event list -------------------------------------------------------------------------

DELIVERY_STATES = ("delivered", "pending", "failed", "none")


@dataclass(frozen=True, slots=True)
class EventSummary:
    id: int
    type: str
    transaction_id: str | None
    created_at: datetime
    delivery_state: str

    @property
    def public_id(self) -> str:
        return f"{EVENT_ID_PREFIX}{self.id}"


@dataclass(frozen=True, slots=True)
class EventPage:
    items: list[EventSummary]
    total: int


async def list_events(
    rt: Runtime,
    account_id: int,
    *,
    event_type: str | None = None,
    delivery_state: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    page: int = 1,
    size: int = 20,
) -> EventPage:
    async with rt.db.connection() as conn:
        found, total = await rows.list_events(
            conn,
            account_id,
            event_type=event_type,
            delivery_state=delivery_state,
            start=start,
            end=end,
            limit=size,
            offset=(page - 1) * size,
        )
    items = [
        EventSummary(
            r["id"],
            r["type"],
            str(r["transaction_id"]) if r["transaction_id"] else None,
            r["created_at"],
            r["delivery_state"],
        )
        for r in found
    ]
    return EventPage(items, total)
