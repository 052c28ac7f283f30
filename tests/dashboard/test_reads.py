"""The service reads and verbs the dashboard added: the delivery log, deactivating a URL,
a charge by its transactionId, and sign-in without a certificate. Each is scoped by account."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

from pixgate.accounts.service import auth
from pixgate.charges.service import cash_in, charges
from pixgate.core.errors import InvalidCredentials, NotFound
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.queries import endpoints as webhook_rows
from tests.helpers import make_account
from tests.support import drain
from tests.webhooks.receiver import Receiver

CPF = "52998224725"


def _order(external_id: str) -> cash_in.CashInOrder:
    return cash_in.CashInOrder(
        value=Decimal("10.00"),
        description="Pedido",
        external_id=external_id,
        payer_name="Maria",
        payer_document=CPF,
    )


async def test_delivery_log_lists_each_attempt_of_the_account_only(rt: Runtime) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    receiver = Receiver()
    await receiver.start()
    try:
        a, b = await make_account(rt, balance="10"), await make_account(rt)
        receiver.plan("/hook", 500, 200)
        await webhooks.add(rt, a.account_id, event_type="cash_in", url=receiver.url("/hook"))
        created = await cash_in.create(rt, a.account_id, _order("log-1"))
        await charges.sandbox_pay(rt, created.pix_code, charges.Payer("Pagador", CPF))
        await drain(rt)
        found = await webhooks.delivery_log(rt, a.account_id)
        assert found.total == 1
        (entry,) = found.events
        event = entry.event
        assert event.type == "cash_in" and event.transaction_id == str(created.transaction_id)
        (delivery,) = entry.deliveries
        assert delivery.url == receiver.url("/hook") and delivery.status == "pending"
        assert delivery.next_attempt_at is not None
        (attempt,) = delivery.attempts
        assert (attempt.status_code, attempt.trigger) == (500, "delivery")
        assert attempt.duration_ms >= 0
        await webhooks.resend(rt, a.account_id, event.public_id, None)
        (delivery,) = (await webhooks.delivery_log(rt, a.account_id)).events[0].deliveries
        assert [x.status_code for x in delivery.attempts] == [500, 200]
        assert delivery.status == "delivered" and delivery.next_attempt_at is None
        assert (await webhooks.delivery_log(rt, b.account_id)).events == []
        filtered = await webhooks.delivery_log(rt, a.account_id, delivery_state="failed")
        assert filtered.total == 0
    finally:
        await receiver.stop()


async def test_deactivate_is_the_accounts_and_registering_again_reactivates(
    rt: Runtime,
) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    a, b = await make_account(rt), await make_account(rt)
    added = await webhooks.add(rt, a.account_id, event_type="cash_out", url="http://127.0.0.1:9/x")
    with pytest.raises(NotFound):
        await webhooks.deactivate(rt, b.account_id, added.endpoint.id)
    await webhooks.deactivate(rt, a.account_id, added.endpoint.id)
    (listed,) = await webhooks.list_endpoints(rt, a.account_id)
    assert listed.is_active is False
    with pytest.raises(NotFound):
        await webhooks.deactivate(rt, a.account_id, added.endpoint.id)
    again = await webhooks.add(
        rt, a.account_id, event_type="cash_out", url="http://127.0.0.1:9/x", version="v2"
    )
    assert again.created and again.endpoint.id == added.endpoint.id
    assert again.endpoint.is_active and again.endpoint.version == "v2"
    async with rt.db.connection() as conn:
        assert await webhook_rows.count_active(conn, a.account_id, "cash_out") == 1


async def test_a_charge_by_its_transaction_id(rt: Runtime) -> None:
    a, b = await make_account(rt), await make_account(rt)
    created = await cash_in.create(rt, a.account_id, _order("find-1"))
    found = await cash_in.find(rt, a.account_id, created.transaction_id)
    assert (found.pix_code, found.amount, found.status) == (created.pix_code, 1000, "PENDING")
    assert found.external_id == "find-1" and found.description == "Pedido"
    for account_id, transaction_id in (
        (b.account_id, created.transaction_id),
        (a.account_id, uuid.uuid4()),
    ):
        with pytest.raises(NotFound):
            await cash_in.find(rt, account_id, transaction_id)


async def test_sign_in_checks_the_credential_without_a_certificate(rt: Runtime) -> None:
    account = await make_account(rt)
    principal = await auth.sign_in(rt, account.client_id, account.client_secret)
    assert principal.account_id == account.account_id
    for client_id, secret in (
        (account.client_id, "wrong"),
        (str(uuid.uuid4()), account.client_secret),
        ("not-a-uuid", account.client_secret),
    ):
        with pytest.raises(InvalidCredentials):
            await auth.sign_in(rt, client_id, secret)
    assert await auth.signed_in(rt, account.client_id) == principal
    assert await auth.signed_in(rt, "not-a-uuid") is None
