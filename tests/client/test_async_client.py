"""The asyncio client against a real gateway: the same operations awaited, lists as async
iterators, one token for many concurrent calls, and a webhook received and verified."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from pixgate.accounts.service import accounts
from pixgate.client import AsyncClient, errors, webhooks
from pixgate.client.auth import Token
from pixgate.runtime import Runtime
from pixgate.webhooks.public import service as webhook_service
from pixgate.webhooks.public import webhook_rules
from pixgate.webhooks.schemas import V1Payload, V2Receive, WebhookCreate
from tests.client import builders
from tests.client.conftest import signed_in
from tests.client.counting import Seen
from tests.webhooks.receiver import Receiver


async def test_many_concurrent_calls_obtain_one_token(
    gateway: str, account: accounts.NewAccount
) -> None:
    seen = Seen()
    async with AsyncClient(
        *signed_in(gateway, account),
        cert_header_pem=account.certificate_pem,
        event_hooks=seen.async_hooks(),
    ) as client:
        answers = await asyncio.gather(*(client.balance() for _ in range(20)))
    assert {answer.net_balance for answer in answers} == {Decimal("1000.00")}
    assert seen.token_requests == 1
    assert seen.requests.count("/api/balance") == 20


async def test_operations_are_awaited_and_lists_iterated(async_client: AsyncClient) -> None:
    accepted = await async_client.cash_out(builders.cash_out("10.00"))
    assert accepted.status == "PENDING"
    received = await async_client.sandbox.incoming(builders.incoming("5.00"))
    listed = [t.transaction_id async for t in async_client.transactions(page_size=1)]
    assert sorted(listed) == sorted([accepted.transaction_id, received.transaction_id])
    with pytest.raises(errors.InsufficientBalance) as refused:
        await async_client.cash_out(builders.cash_out("2000.00"))
    assert refused.value.status == 400


async def test_a_refused_token_is_renewed_once(gateway: str, account: accounts.NewAccount) -> None:
    seen = Seen()
    async with AsyncClient(
        *signed_in(gateway, account),
        cert_header_pem=account.certificate_pem,
        event_hooks=seen.async_hooks(),
    ) as client:
        await client.balance()
        client._session._token = Token("not-a-token", float("inf"))
        assert (await client.balance()).net_balance == Decimal(1000)
    assert seen.statuses == [201, 200, 401, 201, 200]


async def test_webhooks_are_registered_resent_and_verified(
    async_client: AsyncClient,
    account: accounts.NewAccount,
    client_runtime: Runtime,
    receiver: Receiver,
) -> None:
    v1, v2 = receiver.url("/v1"), receiver.url("/v2")
    for url, version in ((v1, "v1"), (v2, "v2")):
        webhook = WebhookCreate(url=url, eventType="cash_in", version=version)
        assert (await async_client.webhooks.register(webhook)).success
    listed = await async_client.webhooks.list()
    assert sorted((w.url, w.version) for w in listed.webhooks) == [(v1, "v1"), (v2, "v2")]
    received = await async_client.sandbox.incoming(builders.incoming("9.00"))
    await receiver.wait_for(2)
    resent = await async_client.webhooks.resend(received.transaction_id)
    assert resent.status_code == 200
    await receiver.wait_for(4)
    secret = await webhook_service.config.reveal_secret(client_runtime, account.account_id)
    for delivered in receiver.at("/v1"):
        event = async_client.webhooks.verify(secret, delivered.headers, delivered.body)
        assert isinstance(event, V1Payload)
        assert (event.event, event.transactionId) == ("CashIn", received.transaction_id)
    for delivered in receiver.at("/v2"):
        v2_event = webhooks.verify(secret, delivered.headers, delivered.body)
        assert isinstance(v2_event, V2Receive)
        assert v2_event.data.endToEndId == received.end_to_end_id
    assert len(receiver.at("/v1")) == len(receiver.at("/v2")) == 2


async def test_a_webhook_changed_replayed_or_unknown_is_refused(
    async_client: AsyncClient,
    account: accounts.NewAccount,
    client_runtime: Runtime,
    receiver: Receiver,
) -> None:
    webhook = WebhookCreate(url=receiver.url("/pix"), eventType="cash_in")
    await async_client.webhooks.register(webhook)
    await async_client.sandbox.incoming(builders.incoming("9.00"))
    await receiver.wait_for(1)
    secret = await webhook_service.config.reveal_secret(client_runtime, account.account_id)
    (delivered,) = receiver.at("/pix")
    headers, body = delivered.headers, delivered.body
    with pytest.raises(webhooks.InvalidSignature):
        webhooks.verify(secret, headers, body.replace(b"9.00", b"90.00"))
    with pytest.raises(webhooks.InvalidSignature):
        webhooks.verify(secret, {**headers, "webhook-timestamp": "soon"}, body)
    with pytest.raises(webhooks.StaleTimestamp):
        webhooks.verify(secret, headers, body, now=int(headers["webhook-timestamp"]) + 301)
    at = int(headers["webhook-timestamp"])
    signed = webhook_rules.signature_header([secret], headers["webhook-id"], at, b'{"a": 1}')
    with pytest.raises(webhooks.InvalidPayload):
        webhooks.verify(secret, {**headers, "webhook-signature": signed}, b'{"a": 1}', now=at)
