"""Webhook rules without I/O: what may be registered, where we may POST, how a message is
signed and when it is retried. What a message says is `webhooks.rules.payloads`."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum
from urllib.parse import urlsplit

from pixgate.core.errors import InvalidWebhookConfig, UnsafeWebhookDestination


class EventType(StrEnum):
    """`events.type` and `webhook_endpoints.event_type`: what an event reports."""

    CASH_IN = "cash_in"
    CASH_OUT = "cash_out"
    REFUND_IN = "refund_in"
    REFUND_OUT = "refund_out"
    MED_CREATED = "med_created"
    MED_ACCEPTED = "med_accepted"
    MED_REJECTED = "med_rejected"


class WebhookVersion(StrEnum):
    """`webhook_endpoints.version` and `webhook_deliveries.version`: the payload's shape.

    `api_pix` is the Central Bank's webhook by key (`PUT /webhook/{chave}`): `{"pix": [Pix]}`
    POSTed to its URL + `/pix` for every PIX received by the key and every refund of one that
    ends; it is never chosen for an event type (`VERSIONS`)."""

    V1 = "v1"
    V2 = "v2"
    API_PIX = "api_pix"


class DeliveryStatus(StrEnum):
    """`webhook_deliveries.status`: `pending` until a 2xx (`delivered`) or given up (`failed`)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class AttemptTrigger(StrEnum):
    """`webhook_attempts.trigger`: what made the POST."""

    DELIVERY = "delivery"
    RESEND = "resend"


EVENT_TYPES: tuple[EventType, ...] = tuple(EventType)
VERSIONS: tuple[WebhookVersion, ...] = (WebhookVersion.V1, WebhookVersion.V2)
"""The versions a URL registered for an event type may have."""
V2_EVENT_TYPES = (EventType.CASH_IN, EventType.CASH_OUT, EventType.REFUND_IN, EventType.REFUND_OUT)
"""6.2 defines TRANSFER, RECEIVE and REFUND only; MED events have no v2 shape."""

MAX_HEADERS = 5
MAX_ACTIVE_PER_EVENT = 3
MAX_URL_LENGTH = 2048
MAX_HEADER_NAME_LENGTH = 256
MAX_HEADER_VALUE_LENGTH = 1024
EXCERPT_CHARS = 2048
BLOCKED_HEADER_NAMES = frozenset(
    {
        # blocked: they would break or lie about the request itself.
        "host",
        "content-length",
        "connection",
        "transfer-encoding",
        "content-type",
        "user-agent",
        # ours: a custom header must never replace the signature a receiver verifies.
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""RFC 9110's token characters; matched with `fullmatch` (`$` would let a newline end it)."""
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?")
"""Visible ASCII, spaces only between characters: what every HTTP stack sends unchanged
(a leading or trailing space would be stripped, a control character breaks the request,
and a non-ASCII character cannot be encoded)."""

V1_EVENT_NAMES: dict[str, str] = {
    EventType.CASH_IN: "CashIn",
    EventType.CASH_OUT: "CashOut",
    EventType.REFUND_IN: "RefundIn",
    EventType.REFUND_OUT: "RefundOut",
    EventType.MED_CREATED: "MedCreated",
    EventType.MED_ACCEPTED: "MedAccepted",
    EventType.MED_REJECTED: "MedRejected",
}


# --- configuration -----------------------------------------------------------------------


def check_event_type(event_type: str) -> EventType:
    if event_type not in EVENT_TYPES:
        raise InvalidWebhookConfig(
            f"eventType must be one of {', '.join(EVENT_TYPES)}; got {event_type!r}"
        )
    return EventType(event_type)


def check_version(version: str, event_type: str) -> WebhookVersion:
    if version not in VERSIONS:
        raise InvalidWebhookConfig(f"version must be v1 or v2; got {version!r}")
    if version == WebhookVersion.V2 and event_type not in V2_EVENT_TYPES:
        raise InvalidWebhookConfig(f"version v2 has no payload for {event_type}; use v1")
    return WebhookVersion(version)


def is_header_name(name: str) -> bool:
    """An HTTP header name (RFC 9110 token): no spaces, colons or control characters."""
    return len(name) <= MAX_HEADER_NAME_LENGTH and _HEADER_NAME.fullmatch(name) is not None


def check_headers(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Custom headers: at most 5, valid names, none of the blocked ones, values that
    go on the wire as registered. Every way of registering one calls this, and delivery
    calls it again on what is stored, so no header is ever sent that would break a request."""
    if len(pairs) > MAX_HEADERS:
        raise InvalidWebhookConfig(f"at most {MAX_HEADERS} custom headers; got {len(pairs)}")
    headers: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in pairs:
        lowered = name.lower()
        if not is_header_name(name):
            # not echoed: a pasted "Authorization: Bearer ..." line lands here, credential and all
            raise InvalidWebhookConfig(
                "a header name must be 1 to "
                f"{MAX_HEADER_NAME_LENGTH} of the characters HTTP allows in one "
                "(letters, digits and !#$%&'*+.^_`|~-; no spaces, colons or control characters)"
            )
        if lowered in BLOCKED_HEADER_NAMES:
            raise InvalidWebhookConfig(f"header {name!r} cannot be set")
        if lowered in seen:
            raise InvalidWebhookConfig(f"header {name!r} is given twice")
        if len(value) > MAX_HEADER_VALUE_LENGTH or _HEADER_VALUE.fullmatch(value) is None:
            raise InvalidWebhookConfig(
                f"header {name!r} value must be at most {MAX_HEADER_VALUE_LENGTH} printable "
                "ASCII characters, spaces only between them (no line breaks, tabs or other "
                "control characters)"
            )
        seen.add(lowered)
        headers[name] = value
    return headers


PIX_CALLBACK_PATH = "/pix"
"""What a webhook by key's URL is called at: the document's callback `{webhookUrl}/pix`
(appended as written, as `webhook_delivery_url()` in `sql/030_events.sql` does)."""


def callback_url(webhook_url: str) -> str:
    """The URL a webhook by key's deliveries are POSTed to."""
    return webhook_url + PIX_CALLBACK_PATH


# --- destinations (SSRF) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Destination:
    scheme: str
    host: str
    port: int


INSECURE_HINT = (
    " (a local receiver over http:// or on loopback needs PIXGATE_ALLOW_INSECURE_WEBHOOKS=true, "
    "for local development only, set for the server as well as the CLI)"
)
"""What a refusal that the insecure setting would lift says about it, so a developer with a
receiver on their own machine does not have to guess."""


def parse_destination(url: str, *, allow_insecure: bool) -> Destination:
    """The checks that need no DNS: an absolute https URL (http only when insecure is allowed).

    Registration, a resend's URL and every delivery pass here. A space or an invisible
    character (control, format, separator) is refused before parsing: `urlsplit` silently
    drops tabs and line breaks, so `https://host/h\r\nX-Evil: 1` would look like a fine URL.
    """
    if len(url) > MAX_URL_LENGTH:
        raise InvalidWebhookConfig(f"url is longer than {MAX_URL_LENGTH} characters")
    if any(not c.isprintable() or c.isspace() for c in url):
        raise InvalidWebhookConfig(
            "url must not contain spaces, line breaks or other control or invisible "
            "characters (percent-encode them)"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidWebhookConfig(f"url is not a valid URL: {exc}") from exc
    scheme = parts.scheme.lower()
    allowed = ("https", "http") if allow_insecure else ("https",)
    if scheme not in allowed:
        raise UnsafeWebhookDestination(
            f"url must use HTTPS{INSECURE_HINT if scheme == 'http' else ''}"
        )
    if not parts.hostname:
        raise InvalidWebhookConfig("url must have a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidWebhookConfig("url must not carry credentials; use a custom header")
    return Destination(scheme, parts.hostname, port or (443 if scheme == "https" else 80))


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _reachable_as(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address an IPv6 one stands for (mapped ::ffff:a.b.c.d, 6to4 2002::/16, NAT64
    64:ff9b::/96; Python 3.11 calls the last two global whatever they carry), else itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def check_addresses(host: str, addresses: Iterable[str], *, allow_insecure: bool) -> None:
    """Every address the host resolves to must be public; loopback only when insecure is on.

    All of them are checked (not just the first) because the connection may use any.
    Reserved and site-local IPv6 (::/8 holds the deprecated IPv4-compatible ::a.b.c.d and
    local-use NAT64) are refused too, as `is_global` lets them pass on Python 3.11.
    """
    resolved = list(addresses)
    if not resolved:
        raise UnsafeWebhookDestination(f"{host} does not resolve")
    for text in resolved:
        address = _reachable_as(ipaddress.ip_address(text.split("%", 1)[0]))
        if address.is_loopback and allow_insecure:
            continue
        if (
            not address.is_global
            or address.is_multicast
            or address.is_reserved
            or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
        ):
            raise UnsafeWebhookDestination(
                f"{host} resolves to {address}, a private, loopback, link-local, multicast "
                f"or reserved address{INSECURE_HINT if address.is_loopback else ''}"
            )


# --- signing (Standard Webhooks) ----------------------------------------------------------

SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key: the bytes base64-encoded after `whsec_`."""
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("a webhook secret is whsec_ followed by base64") from exc


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(
    secrets_in_use: Sequence[str], message_id: str, timestamp: int, body: bytes
) -> str:
    """One signature per live secret, space-separated, so a rotation breaks no receiver."""
    return " ".join(sign(s, message_id, timestamp, body) for s in secrets_in_use)


# --- retries ------------------------------------------------------------------------------

RETRY_WINDOW = timedelta(days=3)
FIRST_RETRY_SECONDS = 5.0
RETRY_FACTOR = 3.0
MAX_RETRY_SECONDS = 4 * 3600.0
MAX_RETRY_AFTER_SECONDS = 24 * 3600.0


def retry_delay(failed_attempts: int, jitter: float) -> float:
    """Seconds before the next try after `failed_attempts` failures (1-based).

    5 s, 15 s, 45 s, 2.3 min, 6.8 min, 20 min, 1 h, 3 h, then every 4 h; `jitter` in
    [0, 1) spreads each by +-20 % so that a receiver coming back is not stampeded.
    The first retry therefore comes within 6 s.
    """
    base = min(FIRST_RETRY_SECONDS * RETRY_FACTOR ** (failed_attempts - 1), MAX_RETRY_SECONDS)
    return base * (0.8 + 0.4 * jitter)


def retry_schedule(jitter: float = 0.5, *, window: timedelta = RETRY_WINDOW) -> list[float]:
    """Offsets (seconds from the first attempt) of every retry until the window closes."""
    offsets: list[float] = []
    elapsed, failures = 0.0, 0
    while elapsed < window.total_seconds():
        failures += 1
        elapsed += retry_delay(failures, jitter)
        offsets.append(elapsed)
    return offsets


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Retry-After as delay-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # `str.isdigit` alone takes `²`, which float refuses
        return float(value)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return max(0.0, (at - now).total_seconds())


def next_delay(
    failed_attempts: int, jitter: float, *, status_code: int | None, retry_after: float | None
) -> float:
    """The schedule's delay, stretched to a 429/503 Retry-After (bounded to one day)."""
    delay = retry_delay(failed_attempts, jitter)
    if status_code in (429, 503) and retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return delay


def gives_up(created_at: datetime, now: datetime, *, window: timedelta = RETRY_WINDOW) -> bool:
    """A delivery is failed once it has been retried for the whole window (at least 3 days)."""
    return now - created_at >= window


def is_success(status_code: int) -> bool:
    """Only 2xx; a redirect is a failure (we never follow one: it could point anywhere)."""
    return 200 <= status_code < 300


def excerpt(text: str) -> str:
    return text[:EXCERPT_CHARS]
