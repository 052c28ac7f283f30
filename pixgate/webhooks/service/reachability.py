"""The registered URLs this server will refuse to deliver to, found when it starts.

A URL is checked at registration under the settings of the process that registered it (the
CLI's, the dashboard's), and again at every delivery under the worker's. When the two differ,
as when `PIXGATE_ALLOW_INSECURE_WEBHOOKS=true` was set for one `pixgate webhooks add` only,
every delivery to that URL fails for days while nothing else says why. So the server looks
at every active URL as it starts and says which ones its settings refuse. It checks what
needs no DNS (scheme, IP literals, `localhost`): a start must not wait on resolvers.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from pixgate.core.errors import InvalidWebhookConfig, UnsafeWebhookDestination
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import endpoints as rows
from pixgate.webhooks.rules import webhooks as rules

_LOCAL_NAMES = {"localhost": "127.0.0.1", "localhost.localdomain": "127.0.0.1"}


@dataclass(frozen=True, slots=True)
class Undeliverable:
    endpoint_id: int
    account_id: int
    url: str
    reason: str


def refusal(url: str, *, allow_insecure: bool) -> str | None:
    """Why delivery will refuse `url` under these settings, judged without DNS; None when
    nothing refuses it yet (its host's addresses are checked at each delivery)."""
    try:
        destination = rules.parse_destination(url, allow_insecure=allow_insecure)
        address = _literal_address(destination.host)
        if address is not None:
            rules.check_addresses(destination.host, [address], allow_insecure=allow_insecure)
    except (InvalidWebhookConfig, UnsafeWebhookDestination) as exc:
        return exc.text
    return None


def _literal_address(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return _LOCAL_NAMES.get(host.lower().rstrip("."))


async def undeliverable(rt: Runtime) -> list[Undeliverable]:
    """The active URLs, of every account, that this server's settings refuse."""
    async with rt.db.connection() as conn:
        found = await rows.active_urls(conn)
    allow = rt.settings.allow_insecure_webhooks
    refused = []
    for endpoint in found:
        reason = refusal(endpoint.url, allow_insecure=allow)
        if reason is not None:
            refused.append(Undeliverable(endpoint.id, endpoint.account_id, endpoint.url, reason))
    return refused
