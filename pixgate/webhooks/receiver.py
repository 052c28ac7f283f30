"""Verify pixgate webhooks in your receiver (Standard Webhooks). Needs no database.

    from pixgate.webhooks import verify_signature

    if not verify_signature(secret, request.headers, raw_body):
        return 400

Verify the raw body bytes exactly as received, before parsing the JSON. Deduplicate on
`webhook-id`: delivery is at least once, so the same message can arrive more than once.
See docs/webhooks.md for the payloads and the retry schedule.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Mapping

from pixgate.webhooks.rules.webhooks import sign

__all__ = ["verify_signature"]


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    for key, candidate in headers.items():  # plain dicts are case-sensitive; HTTP is not
        if key.lower() == name:
            return candidate
    return None


def verify_signature(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance: int = 300,
    now: float | None = None,
) -> bool:
    """True when `body` was signed by pixgate with `secret` (`whsec_...`) within `tolerance`
    seconds of now (which defeats replays of old messages).

    `headers` needs `webhook-id`, `webhook-timestamp` and `webhook-signature`; the last may
    hold several space-separated `v1,<base64>` signatures (during a secret rotation both the
    old and the new secret sign); one match is enough. Never raises on bad input.
    """
    message_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not timestamp_text or not signatures:
        return False
    try:
        timestamp = int(timestamp_text)
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        return False
    raw = body.encode() if isinstance(body, str) else body
    try:
        expected = sign(secret, message_id, timestamp, raw).encode()
    except ValueError:
        return False
    for candidate in signatures.split():
        version, _, _value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(candidate.encode(), expected):
            return True
    return False
