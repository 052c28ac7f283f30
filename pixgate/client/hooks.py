"""The webhook operations of the root API: the configurations (`POST`/`GET /api/webhooks`,
answered only where the operator turned them on; the dashboard and the command line manage
webhooks everywhere) and the resend of a transaction's webhook."""

from __future__ import annotations

from urllib.parse import quote

from pixgate.client.calls import Call, reader
from pixgate.webhooks.schemas import (
    ResendRequest,
    ResendResponse,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
)


def list_webhooks() -> Call[WebhookList]:
    """`GET /api/webhooks`: the account's webhook URLs by event type."""
    return Call("GET", "/api/webhooks", reader(WebhookList), retry_safe=True)


def register(webhook: WebhookCreate) -> Call[WebhookCreated]:
    """`POST /api/webhooks`: a URL for one event type (the same URL again updates its
    headers and version)."""
    return Call("POST", "/api/webhooks", reader(WebhookCreated), body=webhook)


def resend(transaction: str | int, *, url: str | None = None) -> Call[ResendResponse]:
    """`POST /api/resend-webhook/{x}`: one delivery of a transaction's webhook now, `x` its
    transactionId, numeric id, externalId, end-to-end id or `evt_<n>`; to `url` for this
    once, or to the configured URLs. Never retried: each call is a delivery."""
    return Call(
        "POST",
        f"/api/resend-webhook/{quote(str(transaction), safe='')}",
        reader(ResendResponse),
        body=ResendRequest(url=url),
    )
