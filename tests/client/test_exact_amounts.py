"""Amounts read by the client are the exact decimals the gateway wrote, however many digits:
pydantic's JSON mode would read them through a binary float."""

from __future__ import annotations

from decimal import Decimal

from pixgate.accounts.service import accounts
from pixgate.client import AsyncClient, Client, webhooks
from pixgate.core.money import MAX_CENTS, to_decimal
from pixgate.med.schemas import SandboxMedRequest
from pixgate.runtime import Runtime
from pixgate.webhooks.public import service as webhook_service
from pixgate.webhooks.schemas import V1Payload, WebhookCreate
from tests.client import builders
from tests.client.conftest import signed_in
from tests.helpers import make_account
from tests.webhooks.receiver import Receiver

LARGEST = to_decimal(MAX_CENTS)
"""The largest balance the ledger keeps: 92233720368547758.07."""


async def test_the_largest_balance_reads_back_to_the_cent(
    gateway: str, client_runtime: Runtime
) -> None:
    rich = await make_account(client_runtime, name="Conta Cheia", balance=LARGEST)
    with Client(*signed_in(gateway, rich), cert_header_pem=rich.certificate_pem) as client:
        (item,) = client.balances().data
        standard = client.balance()
    async with AsyncClient(
        *signed_in(gateway, rich), cert_header_pem=rich.certificate_pem
    ) as async_client:
        awaited = await async_client.balance()
    assert str(LARGEST) == "92233720368547758.07"
    assert item.balance_amount.available == LARGEST
    assert standard.gross_balance == standard.net_balance == awaited.net_balance == LARGEST


def test_an_amount_keeps_the_digits_the_gateway_wrote(client: Client) -> None:
    received = client.sandbox.incoming(builders.incoming("2.50"))
    (listed,) = client.transactions(type="PAYMENT")
    assert listed.transaction_id == received.transaction_id
    assert str(listed.final_amount) == "2.50"
    assert str(client.balance().net_balance) == "1002.50"


async def test_a_verified_webhook_keeps_its_amounts_exact(
    client: Client, account: accounts.NewAccount, client_runtime: Runtime, receiver: Receiver
) -> None:
    client.webhooks.register(WebhookCreate(url=receiver.url("/med"), eventType="med_created"))
    received = client.sandbox.incoming(builders.incoming("2.50"))
    client.sandbox.open_med(SandboxMedRequest(end_to_end_id=received.end_to_end_id))
    await receiver.wait_for(1)
    secret = await webhook_service.config.reveal_secret(client_runtime, account.account_id)
    (delivered,) = receiver.at("/med")
    event = webhooks.verify(secret, delivered.headers, delivered.body)
    assert isinstance(event, V1Payload) and event.med is not None
    assert str(event.med["blockedAmount"]) == "2.50"
    assert event.med["originalTransaction"]["amount"] == Decimal("2.50")
