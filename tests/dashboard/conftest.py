"""A signed-in dashboard session over httpx (ASGI), one cookie jar per account."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI

from pixgate.accounts.service import accounts

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found is not None, page.text
    return found[1]


@dataclass
class Browser:
    """What a browser keeps for one person: cookies, and the page's CSRF token."""

    http: httpx.AsyncClient
    csrf: str = ""

    async def get(self, path: str, **kwargs: object) -> httpx.Response:
        response = await self.http.get(path, **kwargs)  # type: ignore[arg-type]
        found = CSRF.search(response.text)
        if found:
            self.csrf = found[1]
        return response

    async def post(self, path: str, data: dict[str, object] | None = None) -> httpx.Response:
        return await self.http.post(path, data={"csrf": self.csrf, **(data or {})})

    async def sign_in(
        self, account: accounts.NewAccount, secret: str | None = None
    ) -> httpx.Response:
        await self.get("/dashboard/login")
        response = await self.http.post(
            "/dashboard/login",
            data={
                "clientId": account.client_id,
                "clientSecret": account.client_secret if secret is None else secret,
                "csrf": self.csrf,
            },
        )
        if response.status_code == 303:
            await self.get("/dashboard")
        return response


Opener = Callable[[], AbstractAsyncContextManager[Browser]]


@pytest.fixture
def open_browser(app: FastAPI) -> Opener:
    @asynccontextmanager
    async def opened() -> AsyncIterator[Browser]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield Browser(http)

    return opened


@pytest.fixture
async def browser(open_browser: Opener) -> AsyncIterator[Browser]:
    async with open_browser() as opened:
        yield opened
