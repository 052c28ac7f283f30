"""Request bodies the client's tests send, made of the server's own request models."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import TypeVar
from urllib.parse import quote

from pixgate.charges.schemas.cash_in import CashInPayer, CashInRequest, CashInTransaction
from pixgate.core.pix.keys import KeyType
from pixgate.payouts.schemas.cash_out import CashOutDetails, CashOutRequest
from pixgate.sandbox.schemas import SandboxIncomingRequest, SandboxPayer

CPF = "52998224725"
T = TypeVar("T")


def cash_out(value: str = "10.00", *, external_id: str | None = None) -> CashOutRequest:
    return CashOutRequest(
        value=Decimal(value),
        externalId=external_id or uuid.uuid4().hex,
        details=CashOutDetails(
            key="maria@example.com", keyType=KeyType.EMAIL, name="Maria", document=CPF
        ),
    )


def cash_in(value: str = "25.00") -> CashInRequest:
    return CashInRequest(
        transaction=CashInTransaction(
            value=Decimal(value), description="Pedido 981", externalId=uuid.uuid4().hex
        ),
        payer=CashInPayer(fullName="Maria Souza", document=CPF),
    )


def incoming(value: str = "30.00") -> SandboxIncomingRequest:
    return SandboxIncomingRequest(value=Decimal(value), payer=payer())


def payer() -> SandboxPayer:
    return SandboxPayer(name="Maria Souza", document=CPF)


def eventually(read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """`read()` again until `done` says yes (the worker settles in the background); 30 s at
    most, which only a broken worker takes."""
    deadline = time.monotonic() + 30
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def escaped(pem: str) -> str:
    """What nginx's `$ssl_client_escaped_cert` sends."""
    return quote(pem, safe="")
