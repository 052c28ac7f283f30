"""What one request of the API is, told apart from how it is sent: both clients (sync and
async) send the same `Call`s and walk the same `Listing`s, so an operation is described once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson
from pydantic import BaseModel

from pixgate.client import exact
from pixgate.core.money import json_number

if TYPE_CHECKING:
    from pixgate.client.auth import Token

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

Params = Mapping[str, str | int | bool | None]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how its answer is read.

    `retry_safe` says that sending it twice cannot do twice what it asks: a read, or a write
    the gateway recognises when it comes again (its `externalId`, idempotency key, txid or
    refund id). Only such calls are retried after a network error, a 503 or a 429.
    """

    method: str
    path: str
    read: Callable[[bytes], T]
    body: BaseModel | None = None
    params: Params = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_safe: bool = False
    authenticated: bool = True

    def request(self, token: Token | None) -> dict[str, Any]:
        """httpx's arguments for this call: the server's own request model as the JSON
        body, the bearer token when it needs one."""
        headers = dict(self.headers)
        content = None
        if self.body is not None:
            # the Python dump keeps amounts as Decimals, written as the exact JSON numbers
            # they are, as the server writes its own (`core.http.responses`)
            dumped = self.body.model_dump(by_alias=True, exclude_none=True)
            content = orjson.dumps(dumped, default=json_number)
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token.value}"
        params = {name: value for name, value in self.params.items() if value is not None}
        return {
            "method": self.method,
            "url": self.path,
            "params": params,
            "content": content,
            "headers": headers,
        }


def reader(model: type[M]) -> Callable[[bytes], M]:
    """An answer's body read into the server's answer model, by its wire names (some answer
    models are built by field name alone on the server), its amounts the exact decimals the
    gateway wrote (`exact`)."""

    def read(content: bytes) -> M:
        return model.model_validate(exact.loads(content), by_alias=True)

    return read


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    more: bool
    """Whether a later page holds more items."""


@dataclass(frozen=True)
class Listing(Generic[T]):
    """A list the API answers page by page: `page(n)` is the call of page `n` (from 1)."""

    page: Callable[[int], Call[Page[T]]]


def scenario_header(scenario: str | None) -> dict[str, str]:
    """`X-Sandbox-Scenario`, which the sandbox reads to simulate a bank's answer."""
    return {} if scenario is None else {"X-Sandbox-Scenario": scenario}
