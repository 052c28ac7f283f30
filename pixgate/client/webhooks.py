"""A received webhook, verified and read into its payload model.

    from pixgate.client import webhooks

    event = webhooks.verify(secret, request.headers, await request.body())
    if isinstance(event, webhooks.V1Payload) and event.event == "CashOut": ...

The body must be the raw bytes as received. The models are the gateway's own: a v1 payload
(`V1Payload`), a v2 one (`V2Transfer`, `V2Receive`, `V2Refund`), or a webhook by key's
`PixNotificados`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from pydantic import TypeAdapter, ValidationError

from pixgate.client import exact
from pixgate.webhooks import verify_signature
from pixgate.webhooks.by_key.schemas import PixNotificados
from pixgate.webhooks.schemas import V1Payload, V2Receive, V2Refund, V2Transfer

__all__ = [
    "InvalidPayload",
    "InvalidSignature",
    "PixNotificados",
    "StaleTimestamp",
    "V1Payload",
    "V2Receive",
    "V2Refund",
    "V2Transfer",
    "VerificationFailed",
    "WebhookEvent",
    "verify",
]

WebhookEvent = V1Payload | V2Transfer | V2Receive | V2Refund | PixNotificados
_EVENT: TypeAdapter[WebhookEvent] = TypeAdapter(WebhookEvent)


class VerificationFailed(ValueError):
    """A webhook that must not be acted on: answer it with a 4xx."""


class InvalidSignature(VerificationFailed):
    """No signature of the message matches the secret (or its headers are missing): it was
    not sent by the gateway, or was changed on the way."""


class StaleTimestamp(VerificationFailed):
    """The message was signed more than `tolerance` seconds from now: a replay of an old
    message, or a clock far off."""


class InvalidPayload(VerificationFailed):
    """Signed, but no payload the gateway sends (a newer gateway's, for instance)."""


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: int = 300,
    now: float | None = None,
) -> WebhookEvent:
    """The webhook's event, once its Standard Webhooks signature (`webhook-id`,
    `webhook-timestamp`, `webhook-signature`) matches `secret` (`whsec_...`, from
    `pixgate webhooks secret`) within `tolerance` seconds of `now`. Deduplicate on
    `webhook-id`: delivery is at least once."""
    current = time.time() if now is None else now
    lowered = {name.lower(): value for name, value in headers.items()}
    sent_at = lowered.get("webhook-timestamp", "")
    if not sent_at.isascii() or not sent_at.isdigit():
        raise InvalidSignature("the webhook-timestamp header is missing or not a number")
    if abs(current - int(sent_at)) > tolerance:
        raise StaleTimestamp(f"signed at {sent_at}, more than {tolerance} s from now")
    if not verify_signature(secret, lowered, body, tolerance=tolerance, now=current):
        raise InvalidSignature("no signature matches the secret")
    try:
        return _EVENT.validate_python(exact.loads(body))
    except (ValueError, ValidationError) as exc:
        raise InvalidPayload(str(exc)) from exc
