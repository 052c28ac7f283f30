"""The test event: one signed POST of a `webhook.test` payload to one of the account's URLs,
on the merchant's request (the dashboard's "Send test event"), to check that a receiver
is reachable and verifies signatures before a real event depends on it.

It is apart from delivery and resend because nothing happened to tell of: there is no event
row, no delivery and no retry, and the attempt is not in the delivery log; the answer is
shown to whoever asked. The POST itself is delivery's (`transport.post`): the same headers,
signature, destination checks and time limit as every event's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import orjson

from pixgate.core.errors import NotFound
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import endpoints as rows
from pixgate.webhooks.rules import test_payload
from pixgate.webhooks.rules.webhooks import WebhookVersion, callback_url
from pixgate.webhooks.service.config import _signing_secrets
from pixgate.webhooks.service.transport import Attempt, post


@dataclass(frozen=True, slots=True)
class SentTest:
    """What the URL answered to the test event, and the message id it was sent under."""

    url: str
    message_id: str
    attempt: Attempt


async def send_test(rt: Runtime, account_id: int, endpoint_id: int) -> SentTest:
    """POST a test event to one of the account's active URLs (another account's, or an
    inactive one, is NotFound), signed with the account's secrets and with the URL's own
    custom headers."""
    async with rt.db.connection() as conn:
        endpoint = next(
            (e for e in await rows.list_endpoints(conn, account_id) if e.id == endpoint_id),
            None,
        )
        if endpoint is None or not endpoint.is_active:
            raise NotFound(f"active webhook {endpoint_id} not found")
        secrets = await _signing_secrets(conn, account_id)
    test_id = uuid.uuid4().hex
    message_id = f"msg_test_{test_id}"
    body = test_payload.render(
        test_id,
        rt.clock.now(),
        webhook_id=endpoint.id,
        event_type=endpoint.event_type.value,
        version=endpoint.version.value,
        url=endpoint.url,
    )
    api_pix = endpoint.version is WebhookVersion.API_PIX
    url = callback_url(endpoint.url) if api_pix else endpoint.url
    attempt = await post(
        rt,
        url=url,
        body=orjson.dumps(body),
        message_id=message_id,
        headers=endpoint.headers,
        secrets=secrets,
        requested=True,
    )
    return SentTest(url, message_id, attempt)
