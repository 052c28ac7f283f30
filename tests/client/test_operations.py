"""Every operation of the root API through the blocking client, against a real gateway."""

from __future__ import annotations

import uuid
from decimal import Decimal

import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.charges.schemas.cob import Calendario, CobPatch, CobRequest, Valor
from pixgate.client import Client, errors
from pixgate.med.schemas import SandboxMedAnalysis, SandboxMedRequest
from pixgate.payouts.schemas.cash_out_qrcode import QrCashOutRequest
from pixgate.payouts.schemas.dict_transfer import DictPayment, DictTransferRequest
from pixgate.refunds.schemas import DevolucaoRequest, RefundInRequest, RefundOutRequest
from pixgate.runtime import Runtime
from pixgate.sandbox.schemas import SandboxPayRequest
from tests.client import builders
from tests.client.conftest import signed_in
from tests.helpers import make_account


def test_balances_in_both_shapes(client: Client) -> None:
    (item,) = client.balances().data
    amount = item.balance_amount
    assert (amount.available, amount.blocked) == (Decimal(1000), Decimal(0))
    standard = client.balance()
    assert (standard.gross_balance, standard.net_balance, standard.blocked_balance) == (
        Decimal(1000),
        Decimal(1000),
        Decimal(0),
    )


def test_a_cash_out_is_accepted_settled_and_listed(client: Client) -> None:
    order = builders.cash_out("10.00")
    accepted = client.cash_out(order)
    assert (accepted.external_id, accepted.status) == (order.externalId, "PENDING")
    (listed,) = builders.eventually(
        lambda: list(client.transactions(external_id=order.externalId)),
        lambda found: found[0].status == "Confirmado",
    )
    assert listed.transaction_id == accepted.transaction_id
    assert (listed.operation_type, listed.final_amount) == ("Pix out", Decimal("10.00"))
    assert client.balance().net_balance == Decimal("990.00")


def test_a_refused_cash_out_raises_its_codes_class(client: Client) -> None:
    with pytest.raises(errors.InsufficientBalance) as refused:
        client.cash_out(builders.cash_out("5000.00"))
    assert (refused.value.status, refused.value.code) == (400, "PIX_INSUFFICIENT_BALANCE")
    assert refused.value.message and refused.value.user_message and refused.value.error_id
    first = client.cash_out(builders.cash_out(external_id="order-1"))
    with pytest.raises(errors.DuplicateExternalId) as duplicate:
        client.cash_out(builders.cash_out(external_id="order-1"))
    assert duplicate.value.details["existingTransactionId"] == first.transaction_id
    assert client.balance().net_balance == Decimal("990.00")


def test_a_sandbox_scenario_ends_the_cash_out_in_error(client: Client) -> None:
    order = builders.cash_out()
    client.cash_out(order, scenario="TAX_ID_MISMATCH")
    (listed,) = builders.eventually(
        lambda: list(client.transactions(external_id=order.externalId)),
        lambda found: found[0].status == "Error",
    )
    assert listed.status == "Error"
    with pytest.raises(errors.SandboxScenarioUnknown):
        client.cash_out(builders.cash_out(), scenario="NO_SUCH_SCENARIO")


async def test_a_qr_cash_out_pays_another_accounts_charge(
    client: Client, gateway: str, client_runtime: Runtime
) -> None:
    other = await make_account(client_runtime, name="Outra Loja")
    with Client(*signed_in(gateway, other), cert_header_pem=other.certificate_pem) as seller:
        charge = seller.cash_in(builders.cash_in("12.34"))
        assert charge.status == "PENDING" and charge.pix_code.startswith("000201")
        order = QrCashOutRequest(
            value=Decimal("12.34"), qrCode=charge.pix_code, externalId=uuid.uuid4().hex
        )
        assert client.qr_cash_out(order).external_id == order.externalId
        (paid,) = builders.eventually(
            lambda: list(seller.transactions(external_id=charge.external_id)),
            lambda found: found[0].status == "Confirmado",
        )
    assert (paid.operation_type, paid.original_amount) == ("Pix in", Decimal("12.34"))
    with pytest.raises(errors.OwnChargePayment):
        own = client.cash_in(builders.cash_in())
        client.qr_cash_out(
            QrCashOutRequest(value=Decimal("25.00"), qrCode=own.pix_code, externalId="own-1")
        )


def test_a_charge_paid_in_the_sandbox_is_refunded(client: Client) -> None:
    charge = client.cash_in(builders.cash_in("25.00"))
    paid = client.sandbox.pay(SandboxPayRequest(pixCode=charge.pix_code, payer=builders.payer()))
    assert paid.transaction_id == charge.transaction_id
    request = RefundInRequest(refundValue=Decimal("4.00"), externalId="refund981a")
    refund = client.refund(paid.transaction_id, request)
    assert (refund.status, refund.refund_value, refund.external_id) == (
        "PENDING",
        Decimal("4.00"),
        "refund981a",
    )
    with pytest.raises(errors.RefundAmountExceeded):
        client.refund(paid.transaction_id, RefundInRequest(refundValue=Decimal("30.00")))
    with pytest.raises(errors.NotFound):
        client.refund(str(uuid.uuid4()), RefundInRequest(refundValue=Decimal("1.00")))


def test_a_cob_is_created_read_revised_and_cancelled(client: Client) -> None:
    txid = uuid.uuid4().hex[:30]
    cob = CobRequest(calendario=Calendario(expiracao=3600), valor=Valor(original="15.00"))
    created = client.create_cob(txid, cob)
    assert (created.txid, created.revisao, created.status) == (txid, 0, "ATIVA")
    assert client.cob(txid) == created
    revised = client.revise_cob(txid, CobPatch(valor=Valor(original="16.00")))
    assert (revised.revisao, revised.valor.original) == (1, "16.00")
    cancelled = client.revise_cob(txid, CobPatch(status="REMOVIDA_PELO_USUARIO_RECEBEDOR"))
    assert cancelled.status == "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    with pytest.raises(errors.Conflict) as conflict:
        client.create_cob(txid, cob)
    assert conflict.value.status == 409 and conflict.value.error_id
    with pytest.raises(errors.NotFound):
        client.cob("x" * 30)


def test_a_pix_received_is_returned_by_devolucao(client: Client) -> None:
    received = client.sandbox.incoming(builders.incoming("30.00"))
    e2eid = received.end_to_end_id
    answered = client.devolucao(e2eid, "dev1", DevolucaoRequest(valor="2.50"))
    assert (answered.id, answered.valor, answered.status) == ("dev1", "2.50", "EM_PROCESSAMENTO")
    assert client.devolucao(e2eid, "dev1", DevolucaoRequest(valor="2.50")).rtr_id == answered.rtr_id
    assert client.get_devolucao(e2eid, "dev1").rtr_id == answered.rtr_id
    with pytest.raises(errors.ValidationFailed) as refused:
        client.devolucao(e2eid, "dev2", DevolucaoRequest(valor="99.00"))
    assert refused.value.status == 400


def test_a_dict_transfer_answers_once_per_idempotency_key(
    client: Client, gateway: str, account: accounts.NewAccount
) -> None:
    register_key(gateway, account, "joana@example.com")
    transfer = DictTransferRequest(
        pixKey="joana@example.com", payment=DictPayment(currency="BRL", amount=Decimal("7.00"))
    )
    first = client.dict_transfer(transfer, idempotency_key="5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10")
    again = client.dict_transfer(transfer, idempotency_key="5b8f0a54-2f7e-4a8e-9d2c-1f1f7c3a9b10")
    assert (first.type, first.payment.amount, again.id) == ("PENDING", Decimal("7.00"), first.id)
    assert client.dict_transfer(transfer).id != first.id
    unknown = transfer.model_copy(update={"pixKey": "nobody@example.com"})
    with pytest.raises(errors.UnprocessableEntity):
        client.dict_transfer(unknown)


def register_key(gateway: str, account: accounts.NewAccount, key: str) -> None:
    """A key in the sandbox's DICT, which the client does not offer (the sandbox's own
    directory is no part of a real gateway's API)."""
    certificate = {"X-SSL-Client-Cert": builders.escaped(account.certificate_pem)}
    with httpx.Client(base_url=gateway, headers=certificate) as http:
        token = http.post(
            "/api/auth/token",
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
        ).json()["access_token"]
        registered = http.post(
            "/sandbox/dict/keys",
            headers={"Authorization": f"Bearer {token}"},
            json={
                "key": key,
                "keyType": "EMAIL",
                "name": "Joana Lima",
                "document": builders.CPF,
                "ispb": "60701190",
                "bankName": "ITAU UNIBANCO S.A.",
                "bankCode": "341",
                "branch": "0001",
                "accountNumber": "123456",
            },
        )
    assert registered.status_code == 201, registered.text


def test_lists_walk_every_page(client: Client, account: accounts.NewAccount) -> None:
    received = [client.sandbox.incoming(builders.incoming(f"{n}.00")) for n in range(1, 6)]
    listed = list(client.transactions(type="PAYMENT", page_size=2))
    assert {t.transaction_id for t in listed} == {r.transaction_id for r in received}
    assert len(listed) == 5
    by_key = list(client.transactions_by_pix_key(account.pix_key, page_size=2))
    assert {t.transaction_id for t in by_key} == {r.transaction_id for r in received}
    events = list(client.events(type="cash_in", page_size=2))
    assert {e.transaction_id for e in events} == {r.transaction_id for r in received}


def test_a_med_case_is_listed_and_analysed(client: Client) -> None:
    received = client.sandbox.incoming(builders.incoming("40.00"))
    case = client.sandbox.open_med(SandboxMedRequest(end_to_end_id=received.end_to_end_id))
    assert [c.id for c in client.med(page_size=1)] == [case.id]
    analysed = client.sandbox.analyse_med(case.id, SandboxMedAnalysis(result="REJECTED"))
    assert (analysed.status, analysed.analysis_result) == ("ANALYZED", "REJECTED")
    assert [c.status for c in client.med(status="ANALYZED")] == ["ANALYZED"]


def test_the_receiver_of_a_cash_out_returns_it(client: Client) -> None:
    paid = client.cash_out(builders.cash_out("8.00"))
    builders.eventually(
        lambda: list(client.transactions(external_id=paid.external_id)),
        lambda found: found[0].status == "Confirmado",
    )
    returned = client.sandbox.refund_out(
        paid.transaction_id, RefundOutRequest(value=Decimal("3.00"))
    )
    assert (returned.status, returned.value) == ("CONFIRMED", Decimal("3.00"))
    assert client.balance().net_balance == Decimal("995.00")
