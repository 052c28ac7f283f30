"""`AsyncClient`: the gateway's API from asyncio code, safe to share between tasks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar, Unpack

import httpx

from pixgate.client import webhooks
from pixgate.client.api import Operations, SandboxOperations, WebhookOperations
from pixgate.client.auth import Token, token_call
from pixgate.client.binding import AsyncBound
from pixgate.client.calls import Call, Listing
from pixgate.client.connection import Connection, Options
from pixgate.client.retry import Attempts

T = TypeVar("T")


class AsyncSession:
    """`sync_client.Session` for asyncio: one task renews the token while the others wait."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._http = httpx.AsyncClient(**connection.httpx_options())
        self._token: Token | None = None
        self._renewal = asyncio.Lock()

    async def send(self, call: Call[T]) -> T:
        return call.read((await self._answer(call)).content)

    async def items(self, listing: Listing[T]) -> AsyncIterator[T]:
        number = 1
        while True:
            page = await self.send(listing.page(number))
            for item in page.items:
                yield item
            if not page.more:
                return
            number += 1

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _answer(self, call: Call[Any]) -> httpx.Response:
        attempts = Attempts.of(call, self._connection.retry)
        while True:
            token = await self._bearer() if call.authenticated else None
            try:
                answer = await self._http.request(**call.request(token))
            except httpx.TransportError as error:
                retry = attempts.after_error(error)
            else:
                if (answered := attempts.after_answer(answer)) is None:
                    return answer
                retry = answered
            if retry.renew and self._token is token:
                self._token = None
            await asyncio.sleep(retry.delay)

    async def _bearer(self) -> Token:
        token = self._token
        if token is not None and token.fresh(time.monotonic()):
            return token
        async with self._renewal:
            token = self._token
            if token is None or not token.fresh(time.monotonic()):
                asked = time.monotonic()
                connection = self._connection
                answer = await self.send(token_call(connection.client_id, connection.client_secret))
                token = Token.issued(answer, asked, connection.renew_before)
                self._token = token
            return token


class AsyncWebhooks(WebhookOperations, AsyncBound):
    verify = staticmethod(webhooks.verify)


class AsyncSandbox(SandboxOperations, AsyncBound):
    pass


class AsyncClient(Operations, AsyncBound):
    """`Client` for asyncio: every operation is awaited, every list an async iterator.

    async with AsyncClient(url, client_id, secret, cert_header_pem=pem) as client:
        async for transaction in client.transactions():
            ...
    """

    def __init__(
        self, base_url: str, client_id: str, client_secret: str, **options: Unpack[Options]
    ) -> None:
        session = AsyncSession(Connection(base_url, client_id, client_secret, **options))
        super().__init__(session)
        self._session = session
        self.webhooks = AsyncWebhooks(session)
        self.sandbox = AsyncSandbox(session)

    async def aclose(self) -> None:
        await self._session.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
