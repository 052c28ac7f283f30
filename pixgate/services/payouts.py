"""Settlement of every outgoing payment: the settling bank decides, the ledger follows.

The bank is called outside any transaction; then, in one statement (`payments.settle_payout`,
its own transaction), the PENDING row becomes final exactly once (a conditional UPDATE), the
`cash_out` event is written, and the hold is posted (amount to the settling bank, fee to our
revenue) or voided (everything back to available, the amount no longer counted by the
limits). A second run of the same job changes nothing.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from pixgate.db import payments
from pixgate.domain.dict_keys import KeyHolder
from pixgate.provider.base import PaymentOrder, PaymentResult
from pixgate.runtime import Runtime
from pixgate.services import dict_transfer


async def settle(rt: Runtime, transaction_id: int) -> None:
    row = await payments.get(rt.db, transaction_id)
    if row is None or row["status"] != "PENDING" or row["operation"] != "WITHDRAW":
        return
    result = await _ask_the_bank(rt, row)
    # sent with the account's other settlements waiting meanwhile, ahead of its new
    # cash-outs: accepted payouts are settled before more are accepted (db.batches)
    await payments.settle_payout(
        rt.db,
        row["account_id"],
        payments.Settlement(
            transaction_id=transaction_id,
            status=result.status,
            end_to_end_id=result.end_to_end_id,
            counterpart=counterpart_of(result.counterpart),
            error_code=result.error_code,
            error_message=result.error_message,
            processed_at=rt.clock.now(),
            event_type="cash_out",
        ),
    )


async def _ask_the_bank(rt: Runtime, row: asyncpg.Record) -> PaymentResult:
    now = rt.clock.now()
    if row["kind"] == "dict_transfer":
        failure = dict_transfer.expiry_failure(row, now)
        if failure is not None:
            code, message = failure
            return PaymentResult(
                status="ERROR",
                end_to_end_id=row["end_to_end_id"],
                counterpart=None,
                error_code=code,
                error_message=message,
            )
        return await rt.provider.pay(dict_transfer.payment_order(row, now))
    details: dict[str, Any] = row["details"]
    return await rt.provider.pay(
        PaymentOrder(
            transaction_pk=row["id"],
            amount=row["amount"],
            pix_key=row["pix_key"],
            key_type=row["pix_key_type"],
            document=details.get("document"),
            check_document=bool(details.get("checkPixKeyWithDocument")),
            scenario=details.get("scenario"),
            at=now,
        )
    )


def counterpart_of(holder: KeyHolder | None) -> dict[str, Any] | None:
    """The stored counterpart (document unmasked; lists and webhooks mask it)."""
    if holder is None:
        return None
    return {
        "name": holder.name,
        "document": holder.document,
        "bank": {
            "bankISPB": holder.ispb,
            "bankName": holder.bank_name,
            "bankCode": holder.bank_code,
            "accountBranch": holder.branch,
            "accountNumber": holder.account_number,
        },
    }
