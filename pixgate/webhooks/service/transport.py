"""The HTTP side of webhooks: the one pooled client, its guarded connections, and one signed POST.

It is apart from the rest because it holds the state that must exist once per process: the
client per event loop (the per-destination gates are in `destinations`), and the context
variable that carries `allow_insecure_webhooks` down to the connection. Configuration
checks a URL here, delivery and resend POST through here, and nothing here touches the
database.

Every connection goes through `_GuardedBackend`, which resolves the host and refuses
private, loopback, link-local, multicast and reserved addresses on the very
addresses it then connects to, so a DNS change between check and connect cannot slip by.

Every POST presents the client certificate `PIXGATE_WEBHOOK_CLIENT_CERT` (and its key
`PIXGATE_WEBHOOK_CLIENT_KEY`) when one is set: mutual TLS, as the Central Bank's callbacks
are protected; `PIXGATE_WEBHOOK_CA_FILE` adds CAs trusted for receivers' certificates.

A receiver cannot hold or flood us either: redirects are not followed, no cookie is kept,
at most `_READ_LIMIT_BYTES` of an answer's body is read (the connection is then dropped),
and a whole attempt (connect, send, answer) ends at `webhook_timeout_s`, however slowly
the receiver trickles bytes (tests/webhooks/test_hostile_receivers.py); a receiver that
hangs holds few of the worker's job slots (`destinations`,
tests/webhooks/test_slow_receivers.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import socket
import ssl
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpcore
import httpx
import structlog

from pixgate.core.errors import InvalidWebhookConfig, UnsafeWebhookDestination
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from pixgate.webhooks.rules import webhooks as rules
from pixgate.webhooks.service import destinations

log = structlog.get_logger(__name__)

USER_AGENT = "pixgate-webhooks/0.1"
_READ_LIMIT_BYTES = rules.EXCERPT_CHARS * 4


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


@dataclass(frozen=True, slots=True)
class ClientTls:
    """What the webhook client's TLS holds besides the system's trust: the certificate and
    key it presents to every receiver (mutual TLS, as the Central Bank's callbacks are), and
    more CAs it trusts for receivers' certificates. PEM files, read when a client is made."""

    cert: str | None = None
    key: str | None = None
    ca_file: str | None = None

    @classmethod
    def of(cls, settings: Settings) -> ClientTls:
        return cls(
            settings.webhook_client_cert, settings.webhook_client_key, settings.webhook_ca_file
        )

    def ssl_context(self) -> ssl.SSLContext:
        """The default context (certifi's CAs, hostname checked), with these added."""
        context = httpx.create_ssl_context(trust_env=False)
        if self.ca_file is not None:
            context.load_verify_locations(cafile=self.ca_file)
        if self.cert is not None:
            context.load_cert_chain(self.cert, self.key)
        return context


_clients: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[ClientTls, httpx.AsyncClient]
] = weakref.WeakKeyDictionary()


def http_client(tls: ClientTls | None = None) -> httpx.AsyncClient:
    """One pooled client per event loop (the CLI runs several loops in one process) and TLS
    configuration (the settings are read per attempt, so a test may change them).

    No redirects (a redirect is a failed delivery: it could point anywhere), no proxies
    from the environment (a proxy would bypass the destination checks), no cookies.
    """
    tls = tls or ClientTls()
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(tls)
    if client is None:
        transport = httpx.AsyncHTTPTransport(trust_env=False)
        transport._pool = httpcore.AsyncConnectionPool(  # the only way to pass a backend
            ssl_context=tls.ssl_context(),
            max_connections=200,
            max_keepalive_connections=50,
            keepalive_expiry=5.0,
            network_backend=_GuardedBackend(),
        )
        client = httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)
        client._cookies = _NoCookies()  # the `cookies=` argument would be copied into a jar
        clients[tls] = client
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
    ran_to_deadline: bool = False
    """No answer came in time: the attempt's deadline or one of httpx's timeouts."""

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
    requested: bool = False,
) -> Attempt:
    """One signed POST. Never raises for the receiver's faults: they become the Attempt.

    It is signed, timed and stamped once its destination has a free slot, so neither the
    attempt's duration nor `webhook-timestamp` counts the wait for one. A destination that
    has no slot for it (`destinations`: none free within a second, or a silent receiver)
    gets no POST: the attempt fails at once with `not sent: ...`. A `requested` POST (a
    resend the merchant asked for, often to see whether a receiver is back) goes to a
    silent receiver too, within the same bound on POSTs in flight. A URL or custom headers
    that the registration rules refuse (stored before a rule existed) get no POST either,
    nor does any while the client certificate or CA file set cannot be loaded.
    """
    allow = rt.settings.allow_insecure_webhooks
    try:
        destination = rules.parse_destination(url, allow_insecure=allow)
    except (UnsafeWebhookDestination, InvalidWebhookConfig) as exc:
        return _refused(rt, f"destination refused: {exc.text}")
    try:
        rules.check_headers(list(headers.items()))
    except InvalidWebhookConfig as exc:
        return _refused(rt, f"not sent: custom headers refused: {exc.text}")
    try:
        client = http_client(ClientTls.of(rt.settings))
    except OSError as exc:  # ssl.SSLError too: a PEM file missing, unreadable or mismatched
        return _refused(rt, f"not sent: the webhook client's TLS files cannot be loaded: {exc}")
    try:
        await destinations.acquire(
            destination,
            rt.settings.webhook_concurrency_per_destination,
            wait=min(destinations.SLOT_WAIT_S, rt.settings.webhook_timeout_s),
            probe=requested,
        )
    except destinations.NotSent as exc:
        return Attempt(rt.clock.now(), None, 0, None, f"not sent: {exc.reason}", None)
    try:
        attempt = await _post_now(rt, client, url, body, message_id, headers, secrets)
    except BaseException:  # cancelled: it tells nothing of the destination
        destinations.release(destination, answered=False, ran_to_deadline=False)
        raise
    destinations.release(
        destination,
        answered=attempt.status_code is not None and not attempt.ran_to_deadline,
        ran_to_deadline=attempt.ran_to_deadline,
    )
    return attempt


def _refused(rt: Runtime, reason: str) -> Attempt:
    """A failed attempt that sent nothing: the stored URL or headers break the rules (stored
    before a rule existed, or the rules changed since). Logged without the URL or any value,
    which may be the very bytes refused."""
    log.warning("webhook.refused_before_sending", reason=reason)
    return Attempt(rt.clock.now(), None, 0, None, reason, None)


async def _post_now(
    rt: Runtime,
    client: httpx.AsyncClient,
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
    ran_to_deadline = False
    limit = rt.settings.webhook_timeout_s
    try:
        async with (
            asyncio.timeout(limit),
            client.stream(
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
        ran_to_deadline = True
    except UnsafeWebhookDestination as exc:  # an address refused by _GuardedBackend
        error = f"destination refused: {exc.text}"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        # a connect, read or write timeout is the receiver's silence; waiting for one of
        # our pool's connections is not
        ran_to_deadline = isinstance(exc, httpx.TimeoutException) and not isinstance(
            exc, httpx.PoolTimeout
        )
    finally:
        _allow_loopback.reset(token)
    duration_ms = round((time.monotonic() - started) * 1000)
    return Attempt(sent_at, status_code, duration_ms, text, error, retry_after, ran_to_deadline)
