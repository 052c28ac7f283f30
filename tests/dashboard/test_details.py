"""The dashboard's lists and detail pages over HTTP (ASGI): the list of charges, a
transaction's page (history, error reason, webhook deliveries, QR), a delivery's page
(payload, answers, resend to its URL), a resend's report of every URL, the test event, a
charge's status address and the sandbox's simulated payment, the new-charge form's
expiration bounds, and tenancy on each of them. The browser journey is in tests/browser/."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pytest

from pixgate.charges.service import cash_in, charges
from pixgate.runtime import Runtime
from pixgate.sandbox.bank import SandboxBank
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.receiver import verify_signature
from tests.dashboard.conftest import Browser, Opener
from tests.helpers import make_account
from tests.support import FixedClock, drain
from tests.webhooks.receiver import Receiver

CPF = "52998224725"
DELIVERY_LINK = re.compile(r'href="/dashboard/deliveries/(\d+)"')


def _order(
    external_id: str, *, value: str = "10.00", expiration: int = 3600
) -> cash_in.CashInOrder:
    return cash_in.CashInOrder(
        value=Decimal(value),
        description="Pedido",
        external_id=external_id,
        payer_name="Maria",
        payer_document=CPF,
        expiration_time=expiration,
    )


async def _paid_charge(rt: Runtime, account_id: int, external_id: str) -> cash_in.CashIn:
    """A charge paid from outside, its webhooks delivered (the jobs run)."""
    created = await cash_in.create(rt, account_id, _order(external_id))
    await charges.sandbox_pay(rt, created.pix_code, charges.Payer("Pagador", CPF))
    await drain(rt)
    return created


def _rows(html: str) -> list[str]:
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return [row for row in body.split("<tr")[1:]]


@pytest.fixture
def insecure(rt: Runtime) -> Runtime:
    """Loopback http receivers allowed (tests only)."""
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    return rt


class TestChargeList:
    async def test_newest_first_paginated_with_status_amount_created_and_a_link(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        clock = FixedClock(datetime(2026, 3, 2, 15, 4, tzinfo=UTC))
        rt.clock = clock
        made = []
        for n in range(22):
            made.append(
                await cash_in.create(
                    rt, account.account_id, _order(f"list-{n}", value=f"{n + 1}.00")
                )
            )
            clock.advance(minutes=1)
        await browser.sign_in(account)
        first = await browser.get("/dashboard/charges")
        assert first.status_code == 200
        rows = _rows(first.text)
        assert len(rows) == 20
        newest = made[-1]
        assert f'href="/dashboard/charges/{newest.transaction_id}"' in rows[0]
        assert "R$ 22,00" in rows[0] and "Pendente" in rows[0]
        assert "02/03/2026 12:25 BRT" in rows[0]  # 15:25 UTC, in São Paulo's time
        assert 'rel="next" href="?page=2"' in first.text and "22 in all" in first.text
        second = await browser.get("/dashboard/charges?page=2")
        rows = _rows(second.text)
        assert len(rows) == 2 and str(made[0].transaction_id) in rows[-1]
        assert 'rel="prev"' in second.text and 'rel="next"' not in second.text

    async def test_an_empty_list_points_to_the_form(self, rt: Runtime, browser: Browser) -> None:
        await browser.sign_in(await make_account(rt))
        page = await browser.get("/dashboard/charges")
        assert "No charges yet." in page.text and 'href="/dashboard/charges/new"' in page.text
        assert (await browser.get("/dashboard/charges?page=0")).status_code == 400


class TestTransactionPage:
    async def test_a_paid_charge_its_history_qr_and_webhook_deliveries(
        self, insecure: Runtime, browser: Browser, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url("/in"))
        created = await _paid_charge(rt, account.account_id, "tx-1")
        await browser.sign_in(account)
        listed = await browser.get("/dashboard/transactions")
        assert f'href="/dashboard/transactions/{created.transaction_id}"' in listed.text
        page = await browser.get(f"/dashboard/transactions/{created.transaction_id}")
        assert page.status_code == 200, page.text
        history = page.text.split('class="history"')[1].split("</ol>")[0]
        assert history.index("Pendente") < history.index("Confirmado")
        assert f"/dashboard/charges/{created.transaction_id}/qr.png" in page.text
        webhooks_part = page.text.split('id="webhooks-title"')[1]
        assert "cash_in" in webhooks_part and receiver.url("/in") in webhooks_part
        assert "Entregue" in webhooks_part and DELIVERY_LINK.search(webhooks_part)
        assert "Resend" not in webhooks_part  # resending is the log's and the delivery's

    async def test_an_expired_charge_shows_its_error_reason(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        clock = FixedClock(datetime.now(UTC))
        rt.clock = clock
        created = await cash_in.create(rt, account.account_id, _order("tx-2", expiration=60))
        clock.advance(seconds=61)
        async with rt.db.connection() as conn:  # jobs fall due on the database's clock
            await conn.execute("UPDATE jobs SET run_at = now() WHERE kind = 'charges.expire'")
        assert await drain(rt) >= 1
        await browser.sign_in(account)
        page = await browser.get(f"/dashboard/transactions/{created.transaction_id}")
        reason = page.text.split('id="error-reason">')[1].split("</p>")[0]
        assert "PAYMENT_EXPIRED" in reason
        history = page.text.split('class="history"')[1].split("</ol>")[0]
        assert "Pendente" in history and "Erro" in history and "PAYMENT_EXPIRED" in history
        charge = await browser.get(f"/dashboard/charges/{created.transaction_id}")
        assert "Expirada" in charge.text and "data-poll" not in charge.text


class TestDeliveries:
    async def test_the_log_is_a_table_and_a_delivery_shows_payload_answers_and_resends(
        self, insecure: Runtime, browser: Browser, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        receiver.plan("/in", 500, 200)
        await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url("/in"))
        await _paid_charge(rt, account.account_id, "dl-1")
        await browser.sign_in(account)
        log = await browser.get("/dashboard/deliveries")
        (row,) = _rows(log.text)
        assert receiver.url("/in") in row and "Pendente" in row and ">500<" in row
        found = DELIVERY_LINK.search(row)
        assert found is not None
        detail = await browser.get(f"/dashboard/deliveries/{found[1]}")
        assert detail.status_code == 200
        read = await webhooks.delivery_detail(rt, account.account_id, int(found[1]))
        assert f"Delivery of <code>{read.public_event_id}</code> cash_in" in detail.text
        payload = detail.text.split('id="payload" tabindex="0">')[1].split("</pre>")[0]
        sent = orjson.loads(payload.replace("&#34;", '"').replace("&quot;", '"'))
        assert sent == orjson.loads(receiver.received[0].body)
        assert "HTTP 500" in detail.text and "{&#34;received&#34;: true}" in detail.text
        resent = await browser.post(f"/dashboard/deliveries/{found[1]}/resend")
        assert resent.status_code == 200
        assert (
            f'Resent to <span class="url">{receiver.url("/in")}</span>: answered 200.'
            in resent.text
        )
        assert len(receiver.received) == 2
        assert (
            receiver.received[1].headers["webhook-id"] == receiver.received[0].headers["webhook-id"]
        )
        again = await browser.get(f"/dashboard/deliveries/{found[1]}")
        assert "Entregue" in again.text and again.text.count('class="attempt"') == 2

    async def test_a_resend_to_two_urls_reports_each_outcome(
        self, insecure: Runtime, browser: Browser, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        for path in ("/ok", "/down"):
            await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url(path))
        await _paid_charge(rt, account.account_id, "dl-2")
        receiver.plan("/down", 503)
        await browser.sign_in(account)
        event = (await webhooks.delivery_log(rt, account.account_id)).events[0].event
        page = await browser.post(f"/dashboard/events/{event.id}/resend")
        assert page.status_code == 200
        assert '<div class="notice mixed" role="status">' in page.text  # not all went well
        banner = page.text.split('class="outcomes">')[1].split("</ul>")[0]
        assert (
            f'<li class="ok"><span class="url">{receiver.url("/ok")}</span> answered 200</li>'
            in banner
        )
        assert (
            f'<li class="failed"><span class="url">{receiver.url("/down")}</span> '
            "answered 503 (failed)</li>"
        ) in banner

    async def test_a_resend_with_no_url_says_so(self, rt: Runtime, browser: Browser) -> None:
        account = await make_account(rt)
        created = await cash_in.create(rt, account.account_id, _order("dl-3"))
        await charges.sandbox_pay(rt, created.pix_code, charges.Payer("Pagador", CPF))
        await browser.sign_in(account)
        log = await browser.get("/dashboard/deliveries")
        assert "Sem URL" in log.text
        event = (await webhooks.delivery_log(rt, account.account_id)).events[0].event
        refused = await browser.post(f"/dashboard/events/{event.id}/resend")
        assert refused.status_code == 400 and "no active webhook" in refused.text


class TestTestEvent:
    async def test_a_signed_test_event_and_what_the_url_answered(
        self, insecure: Runtime, browser: Browser, receiver: Receiver
    ) -> None:
        rt = insecure
        account = await make_account(rt)
        await browser.sign_in(account)
        first = await browser.post(
            "/dashboard/webhooks",
            {
                "eventType": "cash_out",
                "url": receiver.url("/t"),
                "headerName": "X-Token",
                "headerValue": "s3",
            },
        )
        secret = re.search(r'value="(whsec_[^"]+)"', first.text)
        assert secret is not None
        (endpoint,) = await webhooks.list_endpoints(rt, account.account_id)
        answered = await browser.post(f"/dashboard/webhooks/{endpoint.id}/test")
        assert answered.status_code == 200
        assert f"Test event sent to {receiver.url('/t')}: answered 200" in answered.text
        (got,) = receiver.received
        body = orjson.loads(got.body)
        assert body["type"] == "webhook.test" and body["data"]["webhookId"] == endpoint.id
        assert body["data"]["eventType"] == "cash_out"
        assert got.headers["x-token"] == "s3"
        assert verify_signature(secret[1], got.headers, got.body)
        assert (await webhooks.delivery_log(rt, account.account_id)).total == 0  # not an event
        receiver.plan("/t", 500)
        failed = await browser.post(f"/dashboard/webhooks/{endpoint.id}/test")
        assert 'role="alert"' in failed.text and "answered 500 (failed)" in failed.text


class TestChargePage:
    async def test_its_status_address_and_the_sandbox_payment(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        created = await cash_in.create(rt, account.account_id, _order("cp-1"))
        await browser.sign_in(account)
        path = f"/dashboard/charges/{created.transaction_id}"
        page = await browser.get(path)
        assert f'data-poll="{path}/status"' in page.text
        assert "Simulate payment (sandbox)" in page.text
        status = await browser.get(f"{path}/status")
        assert status.json() == {
            "status": "PENDING",
            "label": "Pendente",
            "badge": "pending",
            "paidAt": None,
            "final": False,
        }
        paid = await browser.post(f"{path}/simulate-payment")
        assert paid.status_code == 303 and paid.headers["location"] == f"{path}?done=paid"
        status = await browser.get(f"{path}/status")
        assert status.json()["label"] == "Confirmado" and status.json()["final"] is True
        page = await browser.get(paid.headers["location"])
        assert "Payment simulated" in page.text and "data-poll" not in page.text
        assert "Simulate payment" not in page.text
        again = await browser.post(f"{path}/simulate-payment")  # paid already
        assert again.status_code == 409

    async def test_outside_the_sandbox_there_is_no_simulated_payment(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        created = await cash_in.create(rt, account.account_id, _order("cp-2"))
        await browser.sign_in(account)
        rt.settings = rt.settings.model_copy(update={"sandbox": False})
        path = f"/dashboard/charges/{created.transaction_id}"
        assert "Simulate payment" not in (await browser.get(path)).text
        assert (await browser.post(f"{path}/simulate-payment")).status_code == 404


class TestExpirationBounds:
    @pytest.mark.parametrize("minimum", [60, 120])
    async def test_the_form_offers_what_the_server_takes(
        self, rt: Runtime, browser: Browser, minimum: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"provider_min_expiration": minimum})
        # the bank reads the same setting (the runtime outlives the test: put back after it)
        monkeypatch.setattr(rt, "provider", SandboxBank(rt.settings, rt.db))
        await browser.sign_in(await make_account(rt))
        form = (await browser.get("/dashboard/charges/new")).text
        assert f'min="{minimum}" max="604800"' in form and f"From {minimum} s to 7 days" in form
        fields = {"value": "1", "description": "x", "payerName": "M", "payerDocument": CPF}
        below = await browser.post("/dashboard/charges", fields | {"expiration": str(minimum - 1)})
        assert below.status_code == 400 and f"at least {minimum}" in below.text
        at = await browser.post("/dashboard/charges", fields | {"expiration": str(minimum)})
        assert at.status_code == 303


class TestTenancy:
    async def test_another_accounts_charge_transaction_and_delivery_answer_404(
        self, insecure: Runtime, open_browser: Opener, receiver: Receiver
    ) -> None:
        rt = insecure
        owner, other = await make_account(rt), await make_account(rt)
        await webhooks.add(rt, owner.account_id, event_type="cash_in", url=receiver.url("/in"))
        created = await _paid_charge(rt, owner.account_id, "ten-1")
        log = await webhooks.delivery_log(rt, owner.account_id)
        delivery_id = log.events[0].deliveries[0].id
        endpoint_id = (await webhooks.list_endpoints(rt, owner.account_id))[0].id
        tx = created.transaction_id
        async with open_browser() as browser:
            await browser.sign_in(other)
            reads = [
                f"/dashboard/charges/{tx}",
                f"/dashboard/charges/{tx}/status",
                f"/dashboard/charges/{tx}/qr.png",
                f"/dashboard/transactions/{tx}",
                f"/dashboard/deliveries/{delivery_id}",
            ]
            posts = [
                f"/dashboard/deliveries/{delivery_id}/resend",
                f"/dashboard/events/{log.events[0].event.id}/resend",
                f"/dashboard/webhooks/{endpoint_id}/test",
                f"/dashboard/charges/{tx}/simulate-payment",
            ]
            answers = [await browser.get(path) for path in reads]
            answers += [await browser.post(path) for path in posts]
            assert [a.status_code for a in answers] == [404] * len(reads + posts)
            assert str(tx) not in (await browser.get("/dashboard/charges")).text
        assert len(receiver.received) == 1  # nothing sent in the other account's name
        async with open_browser() as browser:
            await browser.sign_in(owner)
            assert (await browser.get(f"/dashboard/transactions/{tx}")).status_code == 200
            assert (await browser.get(f"/dashboard/deliveries/{delivery_id}")).status_code == 200
            assert (await browser.get(f"/dashboard/transactions/{uuid.uuid4()}")).status_code == 404
