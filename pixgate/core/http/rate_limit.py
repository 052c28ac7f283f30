"""Rate limits (`limits`, moving window), storage from `settings.rate_limit_storage`.

`memory://` counts per process; `redis://...` shares the counts between processes (under
`settings.rate_limit_prefix`). The limiter is built once per app, on first use, so nothing
connects at import time. Every refusal carries `Retry-After`.
"""

from __future__ import annotations

import functools
import math
import time

import structlog
from fastapi import Request
from limits import RateLimitItem, parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string

from pixgate.core.errors import RateLimited
from pixgate.core.ids import client_id_of
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

NO_CLIENT = "unparseable"
"""The one key that every clientId naming no credential counts against."""


def limiter(request: Request, rt: Runtime) -> MovingWindowRateLimiter:
    cached: MovingWindowRateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if cached is None:
        storage = storage_from_string(
            f"async+{rt.settings.rate_limit_storage}",
            wrap_exceptions=True,
            key_prefix=rt.settings.rate_limit_prefix,
            implementation="redispy",  # the `redis` package; ignored by memory://
        )
        cached = MovingWindowRateLimiter(storage)
        request.app.state.rate_limiter = cached
    return cached


@functools.lru_cache(maxsize=64)
def item(rate: str) -> RateLimitItem:
    parsed: RateLimitItem = parse(rate)
    return parsed


def client_key(client_id: str) -> str:
    """The key of a limit on a clientId: its canonical form (`client_id_of`), so `urn:uuid:`,
    braces, missing hyphens or upper case meet the counter of the id they spell; text that
    is no id at all shares one key, so garbage cannot open fresh counters either."""
    parsed = client_id_of(client_id)
    return NO_CLIENT if parsed is None else str(parsed)


async def enforce(
    request: Request, rt: Runtime, limit: RateLimitItem, scope: str, key: str | int
) -> None:
    """Count one request of `key` against `limit`; a 429 with `Retry-After` once it is spent.

    A storage that cannot be reached lets the request through (logged): a rate limit
    protects the gateway, and must not take it down with Redis.
    """
    await _check(request, rt, limit, scope, key, counting=True)


async def refuse_if_spent(
    request: Request, rt: Runtime, limit: RateLimitItem, scope: str, key: str | int
) -> None:
    """A 429 once `key` has spent `limit`, without counting this request: for a limit on
    failures only (dashboard sign-ins), which `count` records once they have happened."""
    await _check(request, rt, limit, scope, key, counting=False)


async def _check(
    request: Request,
    rt: Runtime,
    limit: RateLimitItem,
    scope: str,
    key: str | int,
    *,
    counting: bool,
) -> None:
    rate_limiter = limiter(request, rt)
    check = rate_limiter.hit if counting else rate_limiter.test
    try:
        if await check(limit, scope, str(key)):
            return
        stats = await rate_limiter.get_window_stats(limit, scope, str(key))
    except StorageError as exc:
        log.warning("rate_limit.storage_unavailable", scope=scope, error=str(exc))
        return
    retry_after = math.ceil(stats.reset_time - time.time())
    raise RateLimited(f"rate limit of {limit} exceeded; retry later", retry_after=retry_after)


async def count(
    request: Request, rt: Runtime, limit: RateLimitItem, scope: str, key: str | int
) -> None:
    """Count one event of `key` against `limit` (see `refuse_if_spent`)."""
    try:
        await limiter(request, rt).hit(limit, scope, str(key))
    except StorageError as exc:
        log.warning("rate_limit.storage_unavailable", scope=scope, error=str(exc))
