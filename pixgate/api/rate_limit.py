"""Per-account rate limits (`limits`, moving window), storage from `settings.rate_limit_storage`.

`memory://` counts per process; `redis://...` shares the counts between processes. The
limiter is built once per app, on first use, so nothing connects at import time.
"""

from __future__ import annotations

from fastapi import Request
from limits import RateLimitItem, parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from pixgate.domain.errors import RateLimited
from pixgate.runtime import Runtime


def limiter(request: Request, rt: Runtime) -> MovingWindowRateLimiter:
    cached: MovingWindowRateLimiter | None = getattr(request.app.state, "rate_limiter", None)
    if cached is None:
        storage = storage_from_string(f"async+{rt.settings.rate_limit_storage}")
        cached = MovingWindowRateLimiter(storage)
        request.app.state.rate_limiter = cached
    return cached


def item(rate: str) -> RateLimitItem:
    parsed: RateLimitItem = parse(rate)
    return parsed


async def enforce(
    request: Request, rt: Runtime, limit: RateLimitItem, scope: str, account_id: int
) -> None:
    """Count one request of `account_id` against `limit`; a 429 once it is spent."""
    if not await limiter(request, rt).hit(limit, scope, str(account_id)):
        raise RateLimited(f"rate limit of {limit} exceeded; retry later")
