"""Payments to one of our accounts' PIX keys (`account_keys`), settled in the house.

A cash-out or a DICT transfer whose key another of our accounts holds never reaches the
settling bank: in one transaction the payer's WITHDRAW is written settled and accepted in
the house (`outgoing.accept`: the hold, the limits as its kind counts them, posted to the
settlement book at once), and the receiver is credited a PIX received by that key
(`charges.receive`: an INCOMING PAYMENT with the key as its `pix_key`, the `cash_in` fee,
the `cash_in` event), both sides sharing one end-to-end id and linked as our accounts
(`counterpart_account_id`), as a QR cash-out paying one of our charges is. Paying one's own
key is refused (`OwnKeyPayment`), as paying one's own charge is.

A cash-out learns that its key is ours from `payout_create()` itself, which refuses it
(`outgoing.KeyInTheHouse`) before writing anything: the hot path to other banks pays no
extra read. A DICT transfer, which looks its key up first, asks `account_keys` then.

The key's row is share-locked first (a removal waits for the payment), then both accounts
by ascending id, as every path that locks two accounts does. A key removed between the
request's lookup and that lock is no longer ours: the caller pays out through the bank.

A document the payer states for the receiver that differs from the receiving account's
(when it has one) ends the payment in ERROR with `TAX_ID_MISMATCH`, its event written and
nothing debited, as the settling bank would answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.accounts.public import Account, fees, lock_key_owner
from pixgate.charges.public import charges_service as charges
from pixgate.charges.public import settled_at_once
from pixgate.core.counterparts import Counterpart
from pixgate.core.db.pool import Connection
from pixgate.core.errors import OwnKeyPayment, TryAgain
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.settings import Settings
from pixgate.payouts.rules import AcceptMode
from pixgate.payouts.service import external_ids, outgoing
from pixgate.payouts.service.outgoing import FEE_KEY, CashOut, KeyInTheHouse, PendingPayout
from pixgate.provider.base import Instructions
from pixgate.runtime import Runtime
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events

TAX_ID_MISMATCH = ("TAX_ID_MISMATCH", "the document differs from the key holder's")


@dataclass(frozen=True, slots=True)
class Parties:
    """Both sides of a payment to one of our keys, their rows locked."""

    payer: Account
    receiver: Account


async def lock_parties(conn: Connection, account_id: int, key: str) -> Parties | None:
    """The key's holder (its key row share-locked) and the payer, locked by ascending id;
    None when no account of ours holds the key any longer."""
    owner = await lock_key_owner(conn, key)
    if owner is None:
        return None
    if owner.account_id == account_id:
        raise OwnKeyPayment("an account cannot pay its own PIX key")
    locked = await settled_at_once.lock_accounts(conn, [account_id, owner.account_id])
    return Parties(payer=locked[account_id], receiver=locked[owner.account_id])


def counterpart(settings: Settings, account: Account) -> Counterpart:
    """One of our accounts as the other side of a payment settled in the house."""
    return charges.account_counterpart(settings, account)


def document_differs(stated: str | None, receiver: Account) -> bool:
    """The payer named the receiver by another document than the receiving account's."""
    return stated is not None and receiver.document is not None and stated != receiver.document


async def credit(
    conn: Connection,
    settings: Settings,
    parties: Parties,
    amount: int,
    *,
    key: str,
    end_to_end_id: str,
    at: datetime,
    message: str | None,
) -> None:
    """The receiver's side: a PIX received by `key` from the payer, credited at once."""
    await charges.receive(
        conn,
        settings,
        parties.receiver.id,
        amount,
        payer=counterpart(settings, parties.payer),
        end_to_end_id=end_to_end_id,
        at=at,
        key=key,
        payer_message=message,
    )


HOLDER_ATTEMPTS = 3
"""A key added or removed while it is paid sends the payment the other way, at most this often."""


async def create(
    rt: Runtime,
    account_id: int,
    payout: PendingPayout,
    *,
    instructions: Instructions,
    document: str | None,
) -> CashOut:
    """A cash-out (`outgoing.create_pending`), or, when one of our accounts holds its key,
    the same payment settled in the house. `document`: the receiver's, as the payer states."""
    for _ in range(HOLDER_ATTEMPTS):
        try:
            return await outgoing.create_pending(rt, account_id, payout, instructions=instructions)
        except KeyInTheHouse:
            paid = await pay_key(rt, account_id, payout, document=document)
            if paid is not None:
                return paid
    raise TryAgain("the key's holder kept changing while this payment was made")


async def pay_key(
    rt: Runtime, account_id: int, payout: PendingPayout, *, document: str | None
) -> CashOut | None:
    """A cash-out to one of our keys, in one transaction; None when the key is no longer
    ours. Its limits are checked as a cash-out's (`IN_HOUSE`), its externalId once."""
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        parties = await lock_parties(conn, account_id, payout.pix_key)
        if parties is None:
            return None
        await external_ids.refuse_duplicate(conn, account_id, payout.external_id)
        fee = fees.of(rt.settings, parties.payer.fees, FEE_KEY, payout.amount)
        end_to_end_id = new_end_to_end_id(rt.settings.ispb, now)
        mismatch = document_differs(document, parties.receiver)
        row = await settled_at_once.insert_settled_withdraw(
            conn,
            account_id=account_id,
            kind=payout.kind,
            external_id=payout.external_id,
            amount=payout.amount,
            fee=fee,
            end_to_end_id=end_to_end_id,
            pix_key=payout.pix_key,
            pix_key_type=payout.pix_key_type,
            counterpart=counterpart(rt.settings, parties.receiver),
            description=payout.description,
            details=payout.details,
            at=now,
            error=TAX_ID_MISMATCH if mismatch else None,
        )
        if row is None:
            raise await external_ids.duplicate(conn, account_id, payout.external_id)
        if not mismatch:
            await outgoing.accept(
                conn,
                rt.settings,
                AcceptMode.IN_HOUSE,
                account_id,
                row.id,
                amount=payout.amount,
                fee=fee,
                now=now,
                terms=parties.payer,
            )
            await credit(
                conn,
                rt.settings,
                parties,
                payout.amount,
                key=payout.pix_key,
                end_to_end_id=end_to_end_id,
                at=now,
                message=payout.description,
            )
        await events.record(
            conn, account_id=account_id, type=EventType.CASH_OUT, transaction_id=row.id
        )
    return CashOut(
        transaction_id=row.transaction_id,
        external_id=payout.external_id,
        status=row.status,
        created_at=row.created_at,
    )
