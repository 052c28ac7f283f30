"""The counterpart link (`counterpart_ispb`, `counterpart_account_id`): every path that writes
a counterpart fills it from the same `Counterpart` as the document, and an internal PIX is
recognised by the link alone, whatever the document's text says."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import Any

import asyncpg
import httpx
import pytest

from pixgate.core.errors import NotFound
from pixgate.refunds import service as refunds
from pixgate.runtime import Runtime
from tests.charges.test_cash_in import create_charge, split
from tests.helpers import bearer, make_account
from tests.payouts.test_dict_transfer import (
    EMAIL_KEY,
    HOLDER_ISPB,
    post_transfer,
    register_key,
    transfer_body,
)
from tests.refunds.helpers import (
    PAYER,
    InternalPix,
    balance,
    paid_by_our_account,
    receive,
    refund_in,
    send,
)
from tests.support import drain


async def _rows(rt: Runtime, account_id: int) -> list[asyncpg.Record]:
    async with rt.db.connection() as conn:
        return await conn.fetch(
            "SELECT operation, kind, status, counterpart, counterpart_ispb,"
            " counterpart_account_id FROM transactions WHERE account_id = $1 ORDER BY id",
            account_id,
        )


def _bank(row: asyncpg.Record) -> dict[str, Any]:
    bank: dict[str, Any] = row["counterpart"]["bank"]
    return bank


def _link(row: asyncpg.Record) -> tuple[str, str, str | None, int | None]:
    """(operation, kind, ISPB, our account) of a row whose link agrees with its document."""
    assert row["counterpart_ispb"] == _bank(row)["bankISPB"]
    if row["counterpart_account_id"] is not None:
        assert _bank(row)["accountNumber"] == str(row["counterpart_account_id"])
    return row["operation"], row["kind"], row["counterpart_ispb"], row["counterpart_account_id"]


async def _links(rt: Runtime, account_id: int) -> list[tuple[str, str, str | None, int | None]]:
    return [_link(row) for row in await _rows(rt, account_id)]


async def _rewrite_bank(rt: Runtime, transaction_id: str, **bank: str) -> None:
    """Change the stored document's bank after the fact (the link stays as written)."""
    async with rt.db.connection() as conn:
        await conn.execute(
            "UPDATE transactions SET counterpart = jsonb_set(counterpart, '{bank}',"
            " (counterpart -> 'bank') || $2::jsonb) WHERE transaction_id = $1::uuid",
            transaction_id,
            json.dumps(bank),
        )


class TestEveryPathFillsTheLink:
    async def test_an_internal_pix_links_each_account_to_the_other(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")

        ours = rt.settings.ispb
        assert await _links(rt, pix.payer_id) == [
            ("WITHDRAW", "cash_out_qrcode", ours, pix.receiver_id)
        ]
        assert await _links(rt, pix.receiver_id) == [("PAYMENT", "cash_in", ours, pix.payer_id)]

    async def test_payments_from_outside_link_the_payers_bank_only(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        await receive(client, headers, "10.00")
        charge = await create_charge(client, headers, value="20.00")
        paid = await client.post(
            "/sandbox/pix/pay", json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
        )
        assert paid.status_code == 201, paid.text

        links = await _links(rt, account.account_id)
        assert [(op, kind, ours) for op, kind, _, ours in links] == [
            ("PAYMENT", "incoming", None),
            ("PAYMENT", "cash_in", None),
        ]
        assert all(ispb != rt.settings.ispb for _, _, ispb, _ in links)

    async def test_a_cash_out_links_the_bank_that_received_it(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        await send(rt, client, await bearer(client, account), "40.00")

        [(operation, kind, ispb, ours)] = await _links(rt, account.account_id)
        assert (operation, kind, ours) == ("WITHDRAW", "cash_out", None)
        assert ispb is not None and ispb != rt.settings.ispb

    async def test_a_split_payout_links_the_bank_that_received_it(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        charge = await create_charge(
            client, headers, value="10.00", splits=[split("2.00", "FIXED")]
        )
        paid = await client.post(
            "/sandbox/pix/pay", json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
        )
        assert paid.status_code == 201, paid.text
        await drain(rt)

        links = await _links(rt, account.account_id)
        assert [(op, kind, ours) for op, kind, _, ours in links] == [
            ("PAYMENT", "cash_in", None),
            ("WITHDRAW", "split_payout", None),
        ]
        assert all(ispb not in (None, rt.settings.ispb) for _, _, ispb, _ in links)

    async def test_a_dict_transfer_links_the_key_holders_bank(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="1000.00")
        headers = await bearer(client, account)
        await register_key(client, headers)
        response = await post_transfer(client, headers, transfer_body(pixKey=EMAIL_KEY))
        assert response.status_code == 201, response.text

        assert await _links(rt, account.account_id) == [
            ("WITHDRAW", "dict_transfer", HOLDER_ISPB, None)
        ]
        await drain(rt)
        assert await _links(rt, account.account_id) == [
            ("WITHDRAW", "dict_transfer", HOLDER_ISPB, None)
        ]

    async def test_refunds_carry_their_originals_link(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        await refunds.refund_in(
            rt,
            pix.receiver_id,
            uuid.UUID(pix.transaction_id),
            refunds.RefundOrder(amount=1000, external_id="link1"),
        )
        await drain(rt)

        ours = rt.settings.ispb
        assert await _links(rt, pix.receiver_id) == [
            ("PAYMENT", "cash_in", ours, pix.payer_id),
            ("REFUND_IN", "refund_in", ours, pix.payer_id),
        ]
        assert await _links(rt, pix.payer_id) == [
            ("WITHDRAW", "cash_out_qrcode", ours, pix.receiver_id),
            ("REFUND_OUT", "refund_out", ours, pix.receiver_id),
        ]

    async def test_a_return_from_outside_carries_the_cash_outs_link(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        sent = await send(rt, client, await bearer(client, account), "40.00")
        await refunds.refund_out(
            rt, account.account_id, uuid.UUID(sent["transactionId"]), Decimal("5.00")
        )

        [withdraw, returned] = await _links(rt, account.account_id)
        assert returned == ("REFUND_OUT", "refund_out", withdraw[2], None)


class TestTheTwinIsFoundByTheLink:
    async def test_an_internal_pix_whose_document_changed_is_still_refunded_in_the_house(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        await _rewrite_bank(rt, pix.transaction_id, bankISPB=HOLDER_ISPB, accountNumber="x")

        await _refund_all(rt, client, pix)

        assert await balance(rt, pix.receiver_id) == (0, 0)
        assert await balance(rt, pix.payer_id) == (10000, 0)

    async def test_a_document_naming_our_account_does_not_make_a_pix_internal(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """The document still names the payer's account, but the link says the PIX came
        from another bank: the settling bank returns it, and the payer is not credited."""
        pix = await paid_by_our_account(rt, client, "40.00")
        async with rt.db.connection() as conn:
            await conn.execute(
                "UPDATE transactions SET counterpart_ispb = $2, counterpart_account_id = NULL"
                " WHERE transaction_id = $1::uuid",
                pix.transaction_id,
                HOLDER_ISPB,
            )

        await _refund_all(rt, client, pix)

        assert await balance(rt, pix.receiver_id) == (0, 0)
        assert await balance(rt, pix.payer_id) == (6000, 0)

    async def test_a_return_from_outside_of_an_internal_cash_out_is_refused_by_the_link(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        pix = await paid_by_our_account(rt, client, "40.00")
        await _rewrite_bank(rt, pix.withdraw_id, bankISPB=HOLDER_ISPB, accountNumber="1")

        with pytest.raises(NotFound, match="paid to an account of this gateway"):
            await refunds.refund_out(rt, pix.payer_id, uuid.UUID(pix.withdraw_id), Decimal("5.00"))
        assert await balance(rt, pix.payer_id) == (6000, 0)


async def _refund_all(rt: Runtime, client: httpx.AsyncClient, pix: InternalPix) -> None:
    """The receiver refunds the whole PIX through the API and the refund is settled."""
    response = await refund_in(client, pix.receiver_headers, pix.transaction_id, "40.00")
    assert response.status_code == 201, response.text
    await drain(rt)
    async with rt.db.connection() as conn:
        status = await conn.fetchval(
            "SELECT status FROM transactions WHERE transaction_id = $1::uuid",
            response.json()["transactionId"],
        )
    assert status == "CONFIRMED"
