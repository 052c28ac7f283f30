"""The Central Bank's webhooks by key: `PUT/GET/DELETE /webhook/{chave}` and `GET /webhook`.

It is apart from `config` because a webhook by key is named by one of the account's PIX
keys, not by an event type: one URL per key, told (`{webhookUrl}/pix`, `{"pix": [Pix]}`)
of every PIX the key receives and of every refund of one that ends. Its deliveries are the
outbox's like every other (signed, retried, logged, resent); `delivery` renders their body.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.accounts.public import key_owner
from pixgate.core.errors import (
    InvalidWebhookConfig,
    NotFound,
    UnsafeWebhookDestination,
    ValidationFailed,
)
from pixgate.core.pix.keys import dict_key_type, normalize_key
from pixgate.runtime import Runtime
from pixgate.webhooks.queries import by_key as rows
from pixgate.webhooks.queries.by_key import KeyWebhook
from pixgate.webhooks.rules.webhooks import callback_url
from pixgate.webhooks.service.transport import check_url

__all__ = ["KeyWebhook", "KeyWebhookPage", "configure", "get", "page", "remove"]

NOT_THE_ACCOUNTS_KEY = "chave: not a PIX key of this account"


@dataclass(frozen=True, slots=True)
class KeyWebhookPage:
    items: list[KeyWebhook]
    total: int


def _canonical(chave: str) -> str | None:
    """The key in its stored spelling, or None when it is no DICT key at all."""
    key_type = dict_key_type(chave)
    return None if key_type is None else normalize_key(chave, key_type)


async def configure(rt: Runtime, account_id: int, chave: str, url: str) -> KeyWebhook:
    """The key's webhook is `url` from now on. The key must be one of the account's
    (ValidationFailed otherwise, the same answer for a key of nobody and a key of another
    account); the URL follows every webhook's destination rules, checked on the URL the
    gateway will call (`url` + `/pix`)."""
    try:
        await check_url(rt, callback_url(url))
    except (InvalidWebhookConfig, UnsafeWebhookDestination) as exc:
        raise ValidationFailed([f"webhookUrl: {exc.text}"]) from exc
    key = _canonical(chave)
    if key is None:
        raise ValidationFailed(["chave: not a PIX key (DICT)"])
    async with rt.db.begin() as conn:
        owner = await key_owner(conn, key)
        if owner is None or owner.account_id != account_id:
            raise ValidationFailed([NOT_THE_ACCOUNTS_KEY])
        return await rows.put(conn, account_id, key, url)


async def get(rt: Runtime, account_id: int, chave: str) -> KeyWebhook:
    """The account's webhook of the key; NotFound when there is none (or the key is not
    one of the account's)."""
    key = _canonical(chave)
    found = None
    if key is not None:
        async with rt.db.connection() as conn:
            found = await rows.get(conn, account_id, key)
    if found is None:
        raise NotFound(f"no webhook for the key {chave}")
    return found


async def remove(rt: Runtime, account_id: int, chave: str) -> None:
    """The key's webhook is cancelled: no more deliveries, pending ones are failed."""
    key = _canonical(chave)
    removed = False
    if key is not None:
        async with rt.db.begin() as conn:
            removed = await rows.remove(conn, account_id, key)
    if not removed:
        raise NotFound(f"no webhook for the key {chave}")


async def page(
    rt: Runtime,
    account_id: int,
    *,
    start: datetime | None,
    end: datetime | None,
    number: int,
    size: int,
) -> KeyWebhookPage:
    """Page `number` (from 0) of `size` of the account's webhooks by key registered in
    [start, end], oldest first."""
    if start is not None and end is not None and end < start:
        raise ValidationFailed(["fim: must not be before inicio"])
    async with rt.db.connection() as conn:
        found, total = await rows.page(
            conn, account_id, start=start, end=end, limit=size, offset=number * size
        )
    return KeyWebhookPage(found, total)
