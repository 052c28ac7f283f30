"""DICT transfers: pay a PIX key registered in the DICT, once per idempotency key.

`create` looks the key up in the DICT (outside any transaction: it is a provider call),
then in ONE transaction inserts the transfer (INSERT ... ON CONFLICT on the account's
idempotency key), holds amount + fee (available -> blocked) and enqueues its settlement.
A repeat of the key, even concurrent, inserts nothing and answers the first transfer.

Settlement is the generic outgoing one (`payouts.service.settlement`); this module
gives it two hooks: `expiry_failure` (a NORM transfer still queued past
`created_at + expiration` fails with PAYMENT_EXPIRED, its hold voided, no provider call)
and `payment_order` (what `provider.pay` receives). A creditorDocument that differs from
the DICT holder's is known at creation: the transfer is stored in ERROR (TAX_ID_MISMATCH)
with its event and no hold, so the balance is never debited.

A key one of our accounts holds is paid in the house (`payouts.service.in_house`): the
transfer is written CONFIRMED and the receiver credited in the same transaction, its limits
counted as any DICT transfer's (`IN_HOUSE_COUNTED`), without the DICT or the bank; our own
ISPB in `ispbDeny` refuses it, a creditorDocument other than the receiving account's ends it
in ERROR (TAX_ID_MISMATCH), and paying one's own key is refused.

The settling bank's synchronous refusals (`provider.refuse_payment`, the sandbox's
`X-Sandbox-Scenario`) answer before the DICT is asked or one of our keys paid, as the route
answers the real ones; nothing is written or held.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import structlog

from pixgate.accounts.public import fees, find_key_owner
from pixgate.core.counterparts import Counterpart
from pixgate.core.errors import (
    DictKeyNotFound,
    IdempotencyKeyReused,
    InsufficientBalance,
    InvalidPixKey,
    IspbDenied,
    OwnKeyPayment,
    ValidationFailed,
)
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.labels import TransactionKind, TransactionStatus
from pixgate.core.pix.documents import only_document_chars
from pixgate.core.pix.keys import DICT_KEY_FORM, dict_key_type, normalize_key
from pixgate.ledger.public import Transaction
from pixgate.payouts.queries import dict_transfers as rows
from pixgate.payouts.rules import AcceptMode
from pixgate.payouts.service import in_house, outgoing
from pixgate.provider import instructions as provider_instructions
from pixgate.provider.base import NO_INSTRUCTIONS, Instructions, PaymentOrder
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events

log = structlog.get_logger(__name__)

KIND = TransactionKind.DICT_TRANSFER
FEE_KEY = "dict_transfer"
"""Key of `accounts.fees` priced for this operation; absent, the settings' defaults apply."""
"""The generic outgoing settlement; it calls `expiry_failure` and `payment_order` for this kind."""


@dataclass(frozen=True, slots=True)
class TransferOrder:
    """A validated request body (the API schema already rejected every 400)."""

    pix_key: str
    amount: int
    priority: str = "NORM"
    expiration: int = 600
    creditor_document: str | None = None
    description: str | None = None
    payment_flow: str | None = None
    ispb_deny: tuple[str, ...] | None = None

    def details(self) -> dict[str, Any]:
        """What `transactions.details` keeps; also what a repeat of the key is compared with."""
        return {
            "priority": self.priority,
            "expiration": self.expiration,
            "creditorDocument": self.creditor_document,
            "description": self.description,
            "ispbDeny": list(self.ispb_deny) if self.ispb_deny is not None else None,
            "paymentFlow": self.payment_flow,
        }


@dataclass(frozen=True, slots=True)
class Transfer:
    id: int
    end_to_end_id: str
    status: TransactionStatus
    amount: int
    created_at: datetime
    processed_at: datetime | None
    replayed: bool


async def create(
    rt: Runtime,
    account_id: int,
    order: TransferOrder,
    *,
    idempotency_key: uuid.UUID,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> Transfer:
    """Start the transfer, or answer the one this key already made (nothing new is created).
    The request's provider instructions are kept with a transfer the provider settles."""
    key_type = dict_key_type(order.pix_key)
    if key_type is None:  # the API schema rejects these; a defensive check for other callers
        raise ValidationFailed([f"pixKey: must be {DICT_KEY_FORM}"])
    pix_key = normalize_key(order.pix_key, key_type)

    async with rt.db.connection() as conn:
        existing = await rows.by_idempotency_key(conn, account_id, idempotency_key)
    if existing is not None:
        return _replay(existing, order, pix_key)

    owner = await find_key_owner(rt.db, pix_key)
    if owner is not None:
        if owner.account_id == account_id:
            raise OwnKeyPayment("an account cannot pay its own PIX key")
        if order.ispb_deny and rt.settings.ispb in order.ispb_deny:
            raise IspbDenied(f"the key's institution {rt.settings.ispb} is in ispbDeny")
        _refuse_at_once(rt, instructions)
        paid = await _pay_in_house(rt, account_id, order, pix_key, key_type, idempotency_key)
        if paid is not None:
            return paid

    holder = await rt.provider.lookup_key(pix_key, key_type)
    if holder is None:
        raise DictKeyNotFound(f"pixKey {order.pix_key} is not registered in the DICT")
    if order.ispb_deny and holder.ispb in order.ispb_deny:
        raise IspbDenied(f"the key's institution {holder.ispb} is in ispbDeny")
    _refuse_at_once(rt, instructions)

    now = rt.clock.now()
    mismatch = (
        order.creditor_document is not None
        and order.creditor_document != only_document_chars(holder.document)
    )
    async with rt.db.begin() as conn:
        fee = await fees.for_operation(rt.settings, conn, account_id, FEE_KEY, order.amount)
        row = await rows.insert_once(
            conn,
            account_id=account_id,
            idempotency_key=idempotency_key,
            status=TransactionStatus.ERROR if mismatch else TransactionStatus.PENDING,
            amount=order.amount,
            fee=fee,
            end_to_end_id=new_end_to_end_id(rt.settings.ispb, now),
            pix_key=pix_key,
            pix_key_type=key_type,
            description=order.description,
            counterpart=Counterpart.at_another_bank(holder),
            details=order.details(),
            created_at=now,
            error_code="TAX_ID_MISMATCH" if mismatch else None,
            error_message="creditorDocument differs from the key holder's" if mismatch else None,
        )
        if row is None:
            again = await rows.by_idempotency_key(conn, account_id, idempotency_key)
            assert again is not None, "a conflicting key is visible once its insert committed"
            return _replay(again, order, pix_key)
        if mismatch:
            await events.record(
                conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=row.id
            )
        else:
            await provider_instructions.keep(conn, row.id, instructions.value)
            # amount + fee leave `available` now; the settlement job is the queue
            held = await outgoing.accept(
                conn,
                rt.settings,
                AcceptMode.COUNTED,
                account_id,
                row.id,
                amount=row.amount,
                fee=row.fee,
                now=now,
            )
            if not held:
                raise InsufficientBalance("available balance is less than amount + fee")
    log.info("dict_transfer.created", transaction_id=row.id, status=row.status)
    return _transfer(row, replayed=False)


def _refuse_at_once(rt: Runtime, instructions: Instructions) -> None:
    """What the settling bank refuses at once, once the request's own checks have passed (the
    key is in the DICT, its institution not denied) and it is no repeat (a repeat answers the
    first transfer, whatever it tells the bank). A key
    the bank refuses is a `pixKey` field error, as the schema's 400 for a malformed key; a
    lack of balance is the route's own answer to any (`DICT_INSUFFICIENT_BALANCE`)."""
    try:
        rt.provider.refuse_payment(instructions)
    except InvalidPixKey as exc:
        raise InvalidPixKey([f"pixKey: {exc.text}"]) from exc


async def _pay_in_house(
    rt: Runtime,
    account_id: int,
    order: TransferOrder,
    pix_key: str,
    key_type: str,
    idempotency_key: uuid.UUID,
) -> Transfer | None:
    """The transfer to one of our keys, settled in one transaction; None when the key is no
    longer ours (the caller then asks the DICT)."""
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        parties = await in_house.lock_parties(conn, account_id, pix_key)
        if parties is None:
            return None
        mismatch = in_house.document_differs(order.creditor_document, parties.receiver)
        end_to_end_id = new_end_to_end_id(rt.settings.ispb, now)
        row = await rows.insert_once(
            conn,
            account_id=account_id,
            idempotency_key=idempotency_key,
            status=TransactionStatus.ERROR if mismatch else TransactionStatus.CONFIRMED,
            amount=order.amount,
            fee=fees.of(rt.settings, parties.payer.fees, FEE_KEY, order.amount),
            end_to_end_id=end_to_end_id,
            pix_key=pix_key,
            pix_key_type=key_type,
            description=order.description,
            counterpart=in_house.counterpart(rt.settings, parties.receiver),
            details=order.details(),
            created_at=now,
            error_code=in_house.TAX_ID_MISMATCH[0] if mismatch else None,
            error_message="creditorDocument differs from the key holder's" if mismatch else None,
        )
        if row is None:
            again = await rows.by_idempotency_key(conn, account_id, idempotency_key)
            assert again is not None, "a conflicting key is visible once its insert committed"
            return _replay(again, order, pix_key)
        if not mismatch:
            held = await outgoing.accept(
                conn,
                rt.settings,
                AcceptMode.IN_HOUSE_COUNTED,
                account_id,
                row.id,
                amount=row.amount,
                fee=row.fee,
                now=now,
            )
            if not held:
                raise InsufficientBalance("available balance is less than amount + fee")
            await in_house.credit(
                conn,
                rt.settings,
                parties,
                row.amount,
                key=pix_key,
                end_to_end_id=end_to_end_id,
                at=now,
                message=order.description,
            )
        await events.record(
            conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=row.id
        )
    log.info("dict_transfer.in_house", transaction_id=row.id, status=row.status)
    return _transfer(row, replayed=False)


def expiry_failure(row: Transaction, now: datetime) -> tuple[str, str] | None:
    """The settlement hook: (errorCode, message) when a queued NORM transfer has expired.

    HIGH transfers are sent at once and never expire in the queue.
    """
    details = row.details
    if details.get("priority") != "NORM":
        return None
    deadline = row.created_at + timedelta(seconds=int(details["expiration"]))
    if now <= deadline:
        return None
    return "PAYMENT_EXPIRED", f"still queued after {details['expiration']} s (expiration)"


def payment_order(row: Transaction, now: datetime) -> PaymentOrder:
    """The settlement hook: what `provider.pay` gets for a dict transfer.

    The creditorDocument, when given, is checked by the settling bank too (the SPI's own
    TAX_ID_MISMATCH).
    """
    details = row.details
    assert row.pix_key is not None and row.pix_key_type is not None, "a transfer has its key"
    return PaymentOrder(
        transaction_pk=row.id,
        amount=row.amount,
        pix_key=row.pix_key,
        key_type=row.pix_key_type,
        document=details.get("creditorDocument"),
        check_document=details.get("creditorDocument") is not None,
        at=now,
    )


def _replay(row: Transaction, order: TransferOrder, pix_key: str) -> Transfer:
    """The first transfer of this key, if the repeat asks for the same thing (Stripe's rule)."""
    same = (
        row.kind == KIND
        and row.amount == order.amount
        and row.pix_key == pix_key
        and row.details == order.details()
    )
    if not same:
        raise IdempotencyKeyReused(
            "x-idempotency-key was already used with a different request body"
        )
    return _transfer(row, replayed=True)


def _transfer(row: Transaction, *, replayed: bool) -> Transfer:
    assert row.end_to_end_id is not None, "a DICT transfer is numbered when it is written"
    return Transfer(
        id=row.id,
        end_to_end_id=row.end_to_end_id,
        status=row.status,
        amount=row.amount,
        created_at=row.created_at,
        processed_at=row.processed_at,
        replayed=replayed,
    )
