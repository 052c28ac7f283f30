"""`Client`: the gateway's API from blocking code, safe to share between threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, TypeVar, Unpack

import httpx

from pixgate.client import webhooks
from pixgate.client.api import Operations, SandboxOperations, WebhookOperations
from pixgate.client.auth import Token, token_call
from pixgate.client.binding import SyncBound
from pixgate.client.calls import Call, Listing
from pixgate.client.connection import Connection, Options
from pixgate.client.retry import Attempts

T = TypeVar("T")


class Session:
    """Sends calls: the token obtained when first needed and renewed `renew_before` seconds
    ahead of its expiry, by one thread while the others wait for it; retries as
    `RetryPolicy` allows."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._http = httpx.Client(**connection.httpx_options())
        self._token: Token | None = None
        self._renewal = threading.Lock()

    def send(self, call: Call[T]) -> T:
        return call.read(self._answer(call).content)

    def items(self, listing: Listing[T]) -> Iterator[T]:
        number = 1
        while True:
            page = self.send(listing.page(number))
            yield from page.items
            if not page.more:
                return
            number += 1

    def close(self) -> None:
        self._http.close()

    def _answer(self, call: Call[Any]) -> httpx.Response:
        attempts = Attempts.of(call, self._connection.retry)
        while True:
            token = self._bearer() if call.authenticated else None
            try:
                answer = self._http.request(**call.request(token))
            except httpx.TransportError as error:
                retry = attempts.after_error(error)
            else:
                if (answered := attempts.after_answer(answer)) is None:
                    return answer
                retry = answered
            if retry.renew:
                self._forget(token)
            time.sleep(retry.delay)

    def _bearer(self) -> Token:
        token = self._token
        if token is not None and token.fresh(time.monotonic()):
            return token
        with self._renewal:
            token = self._token
            if token is None or not token.fresh(time.monotonic()):
                asked = time.monotonic()
                connection = self._connection
                answer = self.send(token_call(connection.client_id, connection.client_secret))
                token = Token.issued(answer, asked, connection.renew_before)
                self._token = token
            return token

    def _forget(self, token: Token | None) -> None:
        """A refused token goes, unless another thread has renewed it already."""
        with self._renewal:
            if self._token is token:
                self._token = None


class Webhooks(WebhookOperations, SyncBound):
    verify = staticmethod(webhooks.verify)


class Sandbox(SandboxOperations, SyncBound):
    pass


class Client(Operations, SyncBound):
    """The gateway's root API. Give `cert=(cert_file, key_file)` behind the gateway's TLS
    front, or `cert_header_pem=` where no front stands; see `Connection` for the rest.

        with Client(url, client_id, secret, cert_header_pem=pem) as client:
            print(client.balances())
    """

    def __init__(
        self, base_url: str, client_id: str, client_secret: str, **options: Unpack[Options]
    ) -> None:
        session = Session(Connection(base_url, client_id, client_secret, **options))
        super().__init__(session)
        self._session = session
        self.webhooks = Webhooks(session)
        self.sandbox = Sandbox(session)

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
