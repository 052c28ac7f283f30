"""charges.service.cash_in and charges.service.charges, called directly: a charge created,
then paid by the sandbox payer once, credits amount minus the cash-in fee; a PIX received
without a charge too."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pixgate.accounts.service import accounts
from pixgate.charges.service import cash_in, charges
from pixgate.core.errors import ChargeNotPayable, ValidationFailed
from pixgate.ledger.service import verify
from pixgate.runtime import Runtime
from tests.helpers import footprint, make_account
from tests.refunds.helpers import CPF, balance, stored
from tests.refunds.test_refunds_service import memos

PAYER = charges.Payer(name="João Pagador", document=CPF)
CASH_IN_FEE = {"cash_in": {"fixed": "0.50", "percent": "1.5"}}
"""0.50 + 1.5%: 2.00 on 100.00."""


async def charged(rt: Runtime, value: str = "100.00") -> tuple[int, cash_in.CashIn]:
    """An account (1.00, the cash-in fee above) with an open charge of `value`."""
    account = await make_account(rt, balance="1.00")
    await accounts.update(rt, account.account_id, {"fees": CASH_IN_FEE})
    charge = await cash_in.create(
        rt,
        account.account_id,
        cash_in.CashInOrder(
            value=Decimal(value),
            description="pedido 1",
            external_id="charge-1",
            payer_name="João Pagador",
            payer_document=CPF,
        ),
    )
    return account.account_id, charge


async def test_a_paid_charge_credits_amount_minus_fee(rt: Runtime) -> None:
    account_id, charge = await charged(rt)
    assert await balance(rt, account_id) == (100, 0)  # a charge moves nothing until paid
    paid = await charges.sandbox_pay(rt, charge.pix_code, PAYER)
    assert (paid.transaction_id, paid.account_id) == (charge.transaction_id, account_id)
    assert await balance(rt, account_id) == (100 + 10000 - 200, 0)
    payment = await stored(rt, str(charge.transaction_id))
    assert (payment["operation"], payment["status"], payment["amount"], payment["fee"]) == (
        "PAYMENT",
        "CONFIRMED",
        10000,
        200,
    )
    assert payment["end_to_end_id"] == paid.end_to_end_id
    assert payment["counterpart"]["name"] == PAYER.name
    assert await memos(rt, charge.transaction_id) == [
        ("credit", "settlement", -10000),
        ("credit", "available", 9800),
        ("credit", "fees", 200),
    ]
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT status FROM charges") == "CONFIRMED"
        assert await verify.problems(conn) == []


async def test_a_charge_is_paid_once(rt: Runtime) -> None:
    account_id, charge = await charged(rt)
    await charges.sandbox_pay(rt, charge.pix_code, PAYER)
    before, money = await footprint(rt), await balance(rt, account_id)
    with pytest.raises(ChargeNotPayable, match="already paid"):
        await charges.sandbox_pay(rt, charge.pix_code, PAYER)
    assert (await footprint(rt), await balance(rt, account_id)) == (before, money)


async def test_a_pix_received_without_a_charge_credits_amount_minus_fee(rt: Runtime) -> None:
    account = await make_account(rt)
    await accounts.update(rt, account.account_id, {"fees": CASH_IN_FEE})
    received = await charges.sandbox_incoming(rt, account.account_id, Decimal("100.00"), PAYER)
    assert await balance(rt, account.account_id) == (9800, 0)
    row = await stored(rt, str(received.transaction_id))
    assert (row["operation"], row["status"], row["fee"]) == ("PAYMENT", "CONFIRMED", 200)
    assert await memos(rt, received.transaction_id) == [
        ("credit", "settlement", -10000),
        ("credit", "available", 9800),
        ("credit", "fees", 200),
    ]


async def test_the_fee_never_exceeds_what_was_received(rt: Runtime) -> None:
    account = await make_account(rt)
    await accounts.update(rt, account.account_id, {"fees": {"cash_in": {"fixed": "5.00"}}})
    received = await charges.sandbox_incoming(rt, account.account_id, Decimal("1.00"), PAYER)
    assert await balance(rt, account.account_id) == (0, 0)
    assert (await stored(rt, str(received.transaction_id)))["fee"] == 100


@pytest.mark.parametrize(
    ("value", "payer"),
    [
        ("0.00", PAYER),
        ("0.001", PAYER),
        ("1.00", charges.Payer(name="Sem Documento", document="12345678900")),
    ],
    ids=["zero", "three decimals", "invalid CPF"],
)
async def test_a_bad_incoming_pix_is_refused_and_writes_nothing(
    rt: Runtime, value: str, payer: charges.Payer
) -> None:
    account = await make_account(rt)
    before = await footprint(rt)
    with pytest.raises(ValidationFailed):
        await charges.sandbox_incoming(rt, account.account_id, Decimal(value), payer)
    assert await footprint(rt) == before
