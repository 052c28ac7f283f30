"""Webhook configuration: an account's URLs per event type and its signing secrets.

It is apart from delivery because these are the operator's and the merchant's verbs (API and
CLI), each one short transaction, while delivery is the worker's; delivery and resend get
the live signing secrets (the first delivery creates one) through `_signing_secrets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pixgate.core.db.pool import Connection
from pixgate.core.errors import Conflict, NotFound, WebhookLimitReached
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import endpoints as rows
from pixgate.webhooks.queries.endpoints import Endpoint
from pixgate.webhooks.rules import webhooks as rules
from pixgate.webhooks.service.transport import check_url

__all__ = ["AddedEndpoint", "Endpoint"]


@dataclass(frozen=True, slots=True)
class AddedEndpoint:
    endpoint: Endpoint
    created: bool


async def add(
    rt: Runtime,
    account_id: int,
    *,
    event_type: str,
    url: str,
    headers: Sequence[tuple[str, str]] = (),
    version: str = rules.WebhookVersion.V1,
) -> AddedEndpoint:
    """Register a URL for an event type; the same URL again updates headers and version."""
    event = rules.check_event_type(event_type)
    payload_version = rules.check_version(version, event_type)
    clean_headers = rules.check_headers(headers)
    await check_url(rt, url)
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        existing = await rows.find_endpoint(conn, account_id, event, url)
        if existing is not None and existing.is_active:
            updated = await rows.update_endpoint(conn, existing.id, clean_headers, payload_version)
            return AddedEndpoint(updated, created=False)
        if await rows.count_active(conn, account_id, event) >= rules.MAX_ACTIVE_PER_EVENT:
            raise WebhookLimitReached(
                f"{event_type} already has {rules.MAX_ACTIVE_PER_EVENT} active URLs"
            )
        if existing is not None:  # deactivated before: active again, with these headers
            added = await rows.update_endpoint(conn, existing.id, clean_headers, payload_version)
        else:
            added = await rows.insert_endpoint(
                conn, account_id, event, url, clean_headers, payload_version
            )
    return AddedEndpoint(added, created=True)


async def list_endpoints(rt: Runtime, account_id: int) -> list[Endpoint]:
    async with rt.db.connection() as conn:
        if not await rows.account_exists(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        return await rows.list_endpoints(conn, account_id)


async def remove(rt: Runtime, endpoint_id: int) -> None:
    """Delete an endpoint (operator command); its pending deliveries are marked failed."""
    async with rt.db.begin() as conn:
        if not await rows.delete_endpoint(conn, endpoint_id):
            raise NotFound(f"webhook {endpoint_id} not found")


async def deactivate(rt: Runtime, account_id: int, endpoint_id: int) -> None:
    """The account's URL stops receiving events; registering it again re-activates it.
    Another account's id, or an inactive one, is NotFound."""
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        if not await rows.deactivate_endpoint(conn, account_id, endpoint_id):
            raise NotFound(f"active webhook {endpoint_id} not found")


async def _signing_secrets(conn: Connection, account_id: int) -> list[str]:
    """Live secrets; the first delivery of an account creates its secret (shown on request)."""
    found = await rows.signing_secrets(conn, account_id)
    if not found:
        await rows.create_secret_if_missing(conn, account_id, rules.new_secret())
        found = await rows.signing_secrets(conn, account_id)
    return found


async def reveal_secret(rt: Runtime, account_id: int) -> str:
    """The account's signing secret, shown once; afterwards only a rotation shows one."""
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        await rows.create_secret_if_missing(conn, account_id, rules.new_secret())
        secret = await rows.reveal_secret(conn, account_id)
    if secret is None:
        raise Conflict("the webhook secret was already shown; rotate it to get a new one")
    return secret


async def rotate_secret(rt: Runtime, account_id: int) -> str:
    """A new secret; the old one keeps signing for `webhook_secret_overlap_s` (both sign)."""
    secret = rules.new_secret()
    async with rt.db.begin() as conn:
        if not await rows.lock_account(conn, account_id):
            raise NotFound(f"account {account_id} not found")
        await rows.rotate_secret(conn, account_id, secret, rt.settings.webhook_secret_overlap_s)
    return secret
