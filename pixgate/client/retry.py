"""When a failed request is sent again, and after how long: only a request that cannot do
twice what it asks (`Call.retry_safe`), after a network error, a 503 or a 429, a bounded
number of times. A 401 renews the token once, whatever the request: the gateway did
nothing with it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from pixgate.client import errors
from pixgate.client.calls import Call
from pixgate.webhooks.public import webhook_rules

RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    """Sends of one request in all, the first included."""
    backoff: float = 0.5
    """Seconds before the first retry without `Retry-After`; doubled at each one."""
    max_wait: float = 30.0
    """A `Retry-After` longer than this is not waited for: the error is raised."""

    def after_error(self, retry_safe: bool, attempt: int) -> float | None:
        """Seconds to wait before sending again after a network error, or None to raise."""
        if not retry_safe or attempt >= self.attempts:
            return None
        return self._backoff(attempt)

    def after_answer(
        self, retry_safe: bool, attempt: int, status: int, retry_after: str | None
    ) -> float | None:
        """Seconds to wait before sending again after an answer, or None to keep it."""
        if status not in RETRIED_STATUSES or not retry_safe or attempt >= self.attempts:
            return None
        wait = webhook_rules.parse_retry_after(retry_after, datetime.now(UTC))
        if wait is None:
            return self._backoff(attempt)
        return wait if wait <= self.max_wait else None

    def _backoff(self, attempt: int) -> float:
        return float(min(self.backoff * 2 ** (attempt - 1), self.max_wait))


@dataclass(frozen=True)
class Retry:
    delay: float
    renew: bool = False
    """The token was refused: forget it, and obtain another before sending again."""


@dataclass
class Attempts:
    """The sends of one request so far, and what to do after the last one."""

    policy: RetryPolicy
    retry_safe: bool
    authenticated: bool
    attempt: int = 1
    renewed: bool = False

    @classmethod
    def of(cls, call: Call[Any], policy: RetryPolicy) -> Attempts:
        return cls(policy, call.retry_safe, call.authenticated)

    def after_error(self, error: Exception) -> Retry:
        """After a network error: send again, or raise it."""
        delay = self.policy.after_error(self.retry_safe, self.attempt)
        if delay is None:
            raise error
        self.attempt += 1
        return Retry(delay)

    def after_answer(self, answer: httpx.Response) -> Retry | None:
        """After an answer: None to keep it (a success), a `Retry`, or its error raised."""
        status = answer.status_code
        if status < 400:
            return None
        if status == 401 and self.authenticated and not self.renewed:
            self.renewed = True
            return Retry(0.0, renew=True)
        delay = self.policy.after_answer(
            self.retry_safe, self.attempt, status, answer.headers.get("retry-after")
        )
        if delay is None:
            raise errors.from_answer(status, answer.headers, answer.content)
        self.attempt += 1
        return Retry(delay)
