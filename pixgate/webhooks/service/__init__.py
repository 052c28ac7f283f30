"""Webhooks: configuration, signing secrets, delivery attempts, resend, and the event list.

One module per part, each importing only those below it:

- `destinations`: how many POSTs each destination may have in flight and waiting now;
- `transport`: the guarded HTTP client and one signed POST (the per-process state lives here);
- `config`: an account's URLs and signing secrets;
- `by_key`: the API Pix's webhooks by key (one URL per PIX key of the account);
- `delivery`: one automatic attempt of a pending delivery, and the attempt's log;
- `resend`: one synchronous attempt on the merchant's request (of an event, or of one delivery);
- `test_event`: a signed `webhook.test` POST to one URL, on the merchant's request;
- `events`: the event list;
- `log`: the delivery log, each event with its deliveries and their attempts, and one
  delivery in detail (the dashboard).

This package re-exports what the API, the worker, the CLI and the tests call. To replace a
function in a test, patch the module that defines it (`transport.resolve`), not this one.
"""

from pixgate.webhooks.service.config import (
    Endpoint,
    add,
    deactivate,
    list_endpoints,
    remove,
    reveal_secret,
    rotate_secret,
)
from pixgate.webhooks.service.delivery import deliver
from pixgate.webhooks.service.events import list_events
from pixgate.webhooks.service.log import delivery_detail, delivery_log
from pixgate.webhooks.service.resend import ResendOutcome, resend, resend_delivery
from pixgate.webhooks.service.test_event import send_test
from pixgate.webhooks.service.transport import Attempt, http_client, post

__all__ = [
    "Attempt",
    "Endpoint",
    "ResendOutcome",
    "add",
    "deactivate",
    "deliver",
    "delivery_detail",
    "delivery_log",
    "http_client",
    "list_endpoints",
    "list_events",
    "post",
    "remove",
    "resend",
    "resend_delivery",
    "reveal_secret",
    "rotate_secret",
    "send_test",
]
