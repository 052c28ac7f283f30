"""POST /api/pix/cash-out-qrcode: pay a BR Code (copy-and-paste string).

The code is decoded (TLV, CRC16, static or dynamic); `value` must equal its amount when it
has one. Then one of two paths, each one transaction:

- The code is a charge of this gateway (a dynamic code whose location is our
  `{public_url}/loc/{token}`): settled internally and atomically. Both accounts are locked
  (by id), the charge is paid through `charges.pay` (receiver credited amount minus its
  cash-in fee, `cash_in` event), and the payer's WITHDRAW is written CONFIRMED with the
  same end-to-end id and accepted in the house (`outgoing.accept`, `IN_HOUSE`: the limits
  checked, its amount + fee held and posted to the settlement book at once; `cash_out`
  event). The payer's money goes to settlement and comes back out to the
  receiver, so the books balance. Paying one's own charge is refused. The receiver's
  refunds of such a payment are returned in the house too, crediting the payer
  (`refunds.settle_in_house`).
- Any other code: like a cash-out, a PENDING WITHDRAW with amount + fee held, settled by
  `payouts.settle`. The destination is the static code's key, or, for a dynamic code, its
  location URL (stored as the key, key type `LOCATION`), which the sandbox resolves to a
  deterministic synthetic holder. A static code whose key one of our accounts holds is
  paid in the house (`payouts.service.in_house`), as a cash-out to that key is.

Static codes are never ours: the gateway issues only dynamic codes.
Fees: the account's `cash_out` fee (a QR cash-out is a cash-out).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pixgate.accounts.public import fees
from pixgate.charges.public import charges_queries as charge_rows
from pixgate.charges.public import charges_service as charges
from pixgate.charges.public import settled_at_once
from pixgate.core.errors import (
    ChargeNotPayable,
    InvalidQrCode,
    OwnChargePayment,
    QrCodeAmountMismatch,
    ValidationFailed,
)
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.labels import TransactionKind, TransactionStatus
from pixgate.core.pix import brcode
from pixgate.core.pix.documents import document_kind, only_document_chars
from pixgate.core.pix.keys import detect_key_type, normalize_key
from pixgate.payouts.rules import AcceptMode
from pixgate.payouts.service import external_ids, in_house, outgoing
from pixgate.payouts.service.cash_out import amount_of
from pixgate.payouts.service.outgoing import FEE_KEY, CashOut, PendingPayout
from pixgate.provider.base import NO_INSTRUCTIONS, Instructions
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events

KIND = TransactionKind.CASH_OUT_QRCODE
LOCATION_KEY_TYPE = "LOCATION"


@dataclass(frozen=True, slots=True)
class QrCashOutOrder:
    value: Decimal
    qr_code: str
    external_id: str
    description: str | None = None
    name: str | None = None
    document: str | None = None


async def create(
    rt: Runtime,
    account_id: int,
    order: QrCashOutOrder,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> CashOut:
    amount = amount_of(order.value)
    try:
        code = brcode.decode(order.qr_code)
    except brcode.InvalidBrCode as exc:
        raise InvalidQrCode(f"qrCode: {exc}") from exc
    if code.amount_cents is not None and code.amount_cents != amount:
        raise QrCodeAmountMismatch(
            f"value {amount / 100:.2f} differs from the QR code's amount "
            f"{code.amount_cents / 100:.2f}"
        )
    document = only_document_chars(order.document) if order.document else None
    if document is not None and document_kind(document) is None:
        raise ValidationFailed(["document must be a CPF (11 digits) or a CNPJ (14 characters)"])
    details: dict[str, Any] = {
        "name": order.name,
        "document": document,
        "qrCode": {
            "txid": code.txid,
            "merchantName": code.merchant_name,
            "merchantCity": code.merchant_city,
            "locationUrl": code.location_url,
        },
    }
    token = charges.location_token_of(rt.settings, code)
    if token is not None:
        return await _pay_our_charge(rt, account_id, order, amount, token, details, instructions)
    rt.provider.refuse_payment(instructions)
    return await _pay_out(rt, account_id, order, amount, code, details, instructions)


async def _pay_our_charge(
    rt: Runtime,
    account_id: int,
    order: QrCashOutOrder,
    amount: int,
    token: str,
    details: dict[str, Any],
    instructions: Instructions,
) -> CashOut:
    """Settled in the house; the provider's synchronous refusal answers only once the
    payment would otherwise be made (the charge found and payable, the limits and the
    balance enough): raised in the transaction, which then writes nothing."""
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        charge = await charge_rows.by_location_token(conn, token)
        if charge is None:
            raise InvalidQrCode("the QR code points to no charge")
        if charge.account_id == account_id:
            raise OwnChargePayment("an account cannot pay its own charge")
        if charge.amount != amount:
            raise QrCodeAmountMismatch("value differs from the charge's amount")
        locked = await settled_at_once.lock_accounts(conn, [account_id, charge.account_id])
        payer, receiver = locked[account_id], locked[charge.account_id]
        await external_ids.refuse_duplicate(conn, account_id, order.external_id)
        fee = fees.of(rt.settings, payer.fees, FEE_KEY, amount)
        end_to_end_id = new_end_to_end_id(rt.settings.ispb, now)
        try:
            await charges.pay(
                conn,
                rt.settings,
                charge,
                payer=charges.account_counterpart(rt.settings, payer),
                end_to_end_id=end_to_end_id,
                paid_at=now,
                now=now,
            )
        except ChargeNotPayable as exc:
            raise InvalidQrCode(f"qrCode: {exc.text}") from exc
        row = await settled_at_once.insert_settled_withdraw(
            conn,
            account_id=account_id,
            kind=KIND,
            external_id=order.external_id,
            amount=amount,
            fee=fee,
            end_to_end_id=end_to_end_id,
            pix_key=details["qrCode"]["locationUrl"],
            pix_key_type=LOCATION_KEY_TYPE,
            counterpart=charges.account_counterpart(rt.settings, receiver),
            description=order.description,
            details=details,
            at=now,
        )
        if row is None:
            raise await external_ids.duplicate(conn, account_id, order.external_id)
        await outgoing.accept(
            conn,
            rt.settings,
            AcceptMode.IN_HOUSE,
            account_id,
            row.id,
            amount=amount,
            fee=fee,
            now=now,
            terms=payer,
        )
        await events.record(
            conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=row.id
        )
        rt.provider.refuse_payment(instructions)
    return CashOut(
        transaction_id=row.transaction_id,
        external_id=order.external_id,
        status=TransactionStatus.CONFIRMED,
        created_at=row.created_at,
    )


async def _pay_out(
    rt: Runtime,
    account_id: int,
    order: QrCashOutOrder,
    amount: int,
    code: brcode.BrCode,
    details: dict[str, Any],
    instructions: Instructions,
) -> CashOut:
    if code.pix_key is not None:
        key_type: str = detect_key_type(code.pix_key) or "UNKNOWN"
        key = code.pix_key if key_type == "UNKNOWN" else normalize_key(code.pix_key, key_type)
    else:
        assert code.location_url is not None
        key, key_type = code.location_url, LOCATION_KEY_TYPE
    payout = PendingPayout(
        kind=KIND,
        external_id=order.external_id,
        amount=amount,
        pix_key=key,
        pix_key_type=key_type,
        description=order.description,
        details=details,
    )
    return await in_house.create(
        rt, account_id, payout, instructions=instructions, document=details["document"]
    )
