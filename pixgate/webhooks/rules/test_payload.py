"""What a test event says (`webhook.test`, docs/webhooks.md "Test event"): which URL of the
account it was sent to, so a receiver can tell it from every real event by its `type`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pixgate.core.timestamps import iso

TEST_EVENT_TYPE = "webhook.test"


def render(
    test_id: str, at: datetime, *, webhook_id: int, event_type: str, version: str, url: str
) -> dict[str, Any]:
    """The body POSTed to one URL as a test."""
    return {
        "type": TEST_EVENT_TYPE,
        "id": f"test_{test_id}",
        "createdAt": iso(at),
        "data": {"webhookId": webhook_id, "eventType": event_type, "version": version, "url": url},
    }
