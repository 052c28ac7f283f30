"""`webhook.deliver`: one attempt per run; the retry schedule comes back as a `Retry`.

The job is claimed by the worker (its lease covers the POST), the attempt is made outside
any transaction and logged in its own short one. If the worker dies mid-POST the lease
expires and another worker retries with the same `webhook-id`: at least once.
"""

from __future__ import annotations

from pixgate.jobs.public import DeliverWebhook, Retry
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks


async def deliver(rt: Runtime, args: DeliverWebhook) -> None:
    retry_in = await webhooks.deliver(rt, args.delivery_id)
    if retry_in is not None:
        raise Retry(retry_in, "webhook delivery failed; retrying on schedule")
