"""Webhook attempts and deliveries, for `/metrics` (docs/operations.md).

Counted by the process that POSTs: the one running the `webhook.deliver` job (the API
process with its in-process worker, or a `pixgate worker`) and, for a resend, the API
process that served it. Every attempt is also a `webhook_attempts` row; these are its
rates, without reading that table.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from prometheus_client import Counter, Histogram

from pixgate.core.metrics import NETWORK_BUCKETS, labelled
from pixgate.webhooks.rules.webhooks import AttemptTrigger, DeliveryStatus
from pixgate.webhooks.service.transport import Attempt


class AttemptOutcome(StrEnum):
    """How one POST ended: a 2xx (`delivered`), another HTTP answer or one that broke off
    (`http_error`), no answer within the deadline (`timeout`), or none at all
    (`unreachable`: refused, DNS, TLS, a destination not allowed)."""

    DELIVERED = "delivered"
    HTTP_ERROR = "http_error"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"


ATTEMPTS = Counter(
    "pixgate_webhook_attempts_total",
    "Webhook POSTs, by what made them (delivery, resend) and how they ended",
    ["trigger", "outcome"],
)
ATTEMPT_SECONDS = Histogram(
    "pixgate_webhook_attempt_duration_seconds",
    "How long a webhook POST took, connection included, by how it ended",
    ["outcome"],
    buckets=NETWORK_BUCKETS,
)
DELIVERIES = Counter(
    "pixgate_webhook_deliveries_total",
    "Webhook deliveries that reached a final state: delivered, or failed (retries given up)",
    ["outcome"],
)
DELIVERY_SECONDS = Histogram(
    "pixgate_webhook_delivery_seconds",
    "From the event to its webhook's 2xx, retries included",
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400),
)


def attempted(attempt: Attempt, trigger: AttemptTrigger) -> None:
    outcome = _outcome(attempt)
    labelled(ATTEMPTS, trigger, outcome).inc()
    labelled(ATTEMPT_SECONDS, outcome).observe(attempt.duration_ms / 1000)


def _outcome(attempt: Attempt) -> AttemptOutcome:
    if attempt.ok:
        return AttemptOutcome.DELIVERED
    if attempt.ran_to_deadline:
        return AttemptOutcome.TIMEOUT
    if attempt.status_code is not None:
        return AttemptOutcome.HTTP_ERROR
    return AttemptOutcome.UNREACHABLE


def finished(status: DeliveryStatus, created_at: datetime, now: datetime) -> None:
    """A delivery's final move (a pending one, to be tried again, is not counted)."""
    if status is DeliveryStatus.PENDING:
        return
    labelled(DELIVERIES, status).inc()
    if status is DeliveryStatus.DELIVERED:
        DELIVERY_SECONDS.observe((now - created_at).total_seconds())
