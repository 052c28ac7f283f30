"""What a client sent and was answered, seen through httpx's event hooks (the requests as
they leave, the answers as they arrive), to count token requests and retries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

TOKEN_PATH = "/api/auth/token"


@dataclass
class Seen:
    requests: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)

    @property
    def token_requests(self) -> int:
        return self.requests.count(TOKEN_PATH)

    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        return {"request": [self._request], "response": [self._response]}

    def async_hooks(self) -> dict[str, list[Callable[..., Any]]]:
        async def request(sent: httpx.Request) -> None:
            self._request(sent)

        async def response(answer: httpx.Response) -> None:
            self._response(answer)

        return {"request": [request], "response": [response]}

    def _request(self, sent: httpx.Request) -> None:
        self.requests.append(sent.url.path)

    def _response(self, answer: httpx.Response) -> None:
        self.statuses.append(answer.status_code)
