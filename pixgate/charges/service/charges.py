"""The receiving side of a PIX: a charge (cash-in or cob) paid, or a PIX received without one.

`pay` and `receive` run inside the caller's transaction, so the sandbox payer (money from
the outside world) and a QR cash-out of another account of this gateway (money from that
account, in the same transaction) share one path: the charge becomes paid exactly once
(a conditional UPDATE on an open, unexpired charge), its PAYMENT transaction is confirmed
with the end-to-end id and the payer as counterpart, the account is credited amount minus
the `cash_in` fee through the journal, the `cash_in` event is written and the splits are
scheduled. A charge paid, cancelled or expired already answers ChargeNotPayable and moves
nothing.

The sandbox use cases at the bottom open their own transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from pixgate.accounts.public import Account, fees, get_account, keys_of
from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries import settled_at_once
from pixgate.charges.queries.charges import Charge
from pixgate.charges.service import splits
from pixgate.charges.service.locations import location_prefixes
from pixgate.core.counterparts import BANK_NAME, Counterpart
from pixgate.core.db.pool import Connection
from pixgate.core.errors import ChargeNotFound, ChargeNotPayable, NotFound, ValidationFailed
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.labels import ChargeStatus, TransactionKind
from pixgate.core.money import InvalidAmount, amount_cents
from pixgate.core.pix import brcode
from pixgate.core.pix.documents import document_kind, is_valid_document, only_document_chars
from pixgate.core.pix.keys import dict_key_type, normalize_key
from pixgate.core.settings import Settings
from pixgate.ledger.public import Transaction, journal
from pixgate.runtime import Runtime
from pixgate.sandbox.public import synthetic_holder
from pixgate.webhooks.public import EventType
from pixgate.webhooks.public import outbox as events

FEE_KEY = "cash_in"
PAID_STATUSES = frozenset({ChargeStatus.CONFIRMED, ChargeStatus.CONCLUIDA})
EXPIRED_STATUSES = frozenset({ChargeStatus.EXPIRED, ChargeStatus.REMOVIDA_PELO_PSP})


@dataclass(frozen=True, slots=True)
class Received:
    """A payment credited to an account: its PAYMENT transaction."""

    id: int
    transaction_id: UUID
    account_id: int
    end_to_end_id: str


@dataclass(frozen=True, slots=True)
class Payer:
    """Who pays from outside (sandbox): a name and a CPF/CNPJ, and their message to the
    receiver (a Pix's `infoPagador`)."""

    name: str
    document: str
    message: str | None = None


def _without_scheme(url: str) -> str:
    return url.split("://", 1)[-1]


def location_token_of(settings: Settings, code: brcode.BrCode) -> str | None:
    """The charge token of a dynamic code whose location is this gateway's, else None."""
    if code.location_url is None:
        return None
    url = _without_scheme(code.location_url)
    prefix = next((p for p in location_prefixes(settings) if url.startswith(p)), None)
    token = "" if prefix is None else url[len(prefix) :]
    return token if token and "/" not in token else None


def account_counterpart(settings: Settings, account: Account) -> Counterpart:
    """An account of this gateway as the other side of an internal PIX sees it."""
    return Counterpart.our_account(
        account.id,
        name=account.name,
        document=account.document or "",
        ispb=settings.ispb,
        bank_name=BANK_NAME,
    )


async def pay(
    conn: Connection,
    settings: Settings,
    charge: Charge,
    *,
    payer: Counterpart,
    end_to_end_id: str,
    paid_at: datetime,
    now: datetime,
    payer_message: str | None = None,
) -> Received:
    """Pay an open charge (a row as read) in the caller's transaction.

    The receiving account is locked before the charge (see `settled_at_once.lock_accounts`);
    ChargeNotPayable if the charge is no longer open. The payment is received by the cob's
    `chave`, or for a cash-in charge by the account's first key.
    """
    locked = await settled_at_once.lock_accounts(conn, [charge.account_id])
    paid = await charge_rows.mark_paid(conn, charge.id, paid_at=paid_at, now=now)
    if paid is None:
        raise await _not_payable(conn, charge.id, now)
    charge = paid
    amount: int = charge.amount
    fee = _fee(settings, locked[charge.account_id].fees, amount)
    payment = await charge_rows.confirm_payment(
        conn,
        charge.transaction_id,
        amount=amount,
        fee=fee,
        end_to_end_id=end_to_end_id,
        counterpart=payer,
        processed_at=paid_at,
        pix_key=await _receiving_key(conn, charge),
        payer_message=payer_message,
    )
    await _credit(conn, payment, extra={"txId": charge.txid})
    await splits.on_payment(conn, settings, charge=charge, payment=payment, now=now)
    return _received(payment)


async def receive(
    conn: Connection,
    settings: Settings,
    account_id: int,
    amount: int,
    *,
    payer: Counterpart,
    end_to_end_id: str,
    at: datetime,
    key: str | None = None,
    payer_message: str | None = None,
) -> Received:
    """A PIX received without a charge by the account's `key`, credited in the caller's
    transaction."""
    account = await get_account(conn, account_id)
    if account is None:
        raise NotFound("account not found")
    fee = _fee(settings, account.fees, amount)
    payment = await settled_at_once.insert_received(
        conn,
        account_id=account_id,
        kind=TransactionKind.INCOMING,
        amount=amount,
        fee=fee,
        end_to_end_id=end_to_end_id,
        counterpart=payer,
        at=at,
        pix_key=key,
        payer_message=payer_message,
    )
    await _credit(conn, payment, extra=None)
    return _received(payment)


async def _receiving_key(conn: Connection, charge: Charge) -> str | None:
    """The key a charge's payment arrives by, in its stored spelling (so its webhook and every
    lookup by key find it): the cob's `chave`, else the account's first."""
    chave = charge.body.get("chave")
    if isinstance(chave, str):
        key_type = dict_key_type(chave)
        return normalize_key(chave, key_type) if key_type is not None else chave
    keys = await keys_of(conn, charge.account_id)
    return keys[0].key if keys else None


def _fee(settings: Settings, account_fees: dict[str, Any], amount: int) -> int:
    """The `cash_in` fee, never more than what was received."""
    return min(fees.of(settings, account_fees, FEE_KEY, amount), amount)


async def _credit(conn: Connection, payment: Transaction, *, extra: dict[str, Any] | None) -> None:
    await journal.credit(
        conn,
        payment.account_id,
        payment.amount,
        payment.fee,
        transaction_id=payment.id,
    )
    await events.record(
        conn,
        account_id=payment.account_id,
        type=EventType.CASH_IN,
        transaction_id=payment.id,
        extra=extra,
    )


def _received(payment: Transaction) -> Received:
    assert payment.end_to_end_id is not None, "a payment received has its end-to-end id"
    return Received(
        id=payment.id,
        transaction_id=payment.transaction_id,
        account_id=payment.account_id,
        end_to_end_id=payment.end_to_end_id,
    )


async def _not_payable(conn: Connection, charge_id: int, now: datetime) -> ChargeNotPayable:
    charge = await charge_rows.get(conn, charge_id)
    assert charge is not None
    status = charge.status
    if status in PAID_STATUSES:
        reason = "the charge was already paid"
    elif status in EXPIRED_STATUSES or (
        status in charge_rows.OPEN_STATUSES and charge.expires_at <= now
    ):
        reason = "the charge has expired"
    else:
        reason = "the charge was cancelled"
    return ChargeNotPayable(reason)


# --- sandbox -----------------------------------------------------------------------------


def _external_payer(payer: Payer) -> Counterpart:
    """The outside payer as counterpart: its name and document, at a deterministic bank."""
    document = only_document_chars(payer.document)
    if not is_valid_document(document):
        raise ValidationFailed(["payer.document must be a valid CPF or CNPJ"])
    holder = synthetic_holder(document, document_kind(document) or "CPF", document)
    return Counterpart.at_another_bank(holder, name=payer.name)


def _paid_at(rt: Runtime, paid_at: datetime | None) -> datetime:
    now = rt.clock.now()
    if paid_at is None:
        return now
    if paid_at > now:
        raise ValidationFailed(["paidAt must not be in the future"])
    return paid_at


async def sandbox_pay(
    rt: Runtime, pix_code: str, payer: Payer, *, paid_at: datetime | None = None
) -> Received:
    """An outside payer pays the charge (cash-in or cob) a copy-and-paste code points to."""
    counterpart = _external_payer(payer)
    at = _paid_at(rt, paid_at)
    try:
        code = brcode.decode(pix_code)
    except brcode.InvalidBrCode as exc:
        raise ValidationFailed([f"pixCode: {exc}"]) from exc
    token = location_token_of(rt.settings, code)
    if token is None:
        raise ChargeNotFound("pixCode does not point to a charge of this gateway")
    async with rt.db.begin() as conn:
        charge = await charge_rows.by_location_token(conn, token)
        if charge is None:
            raise ChargeNotFound("pixCode does not point to a charge of this gateway")
        return await pay(
            conn,
            rt.settings,
            charge,
            payer=counterpart,
            end_to_end_id=new_end_to_end_id(counterpart.ispb, at),
            paid_at=at,
            now=rt.clock.now(),
            payer_message=payer.message,
        )


async def sandbox_incoming(
    rt: Runtime,
    account_id: int,
    value: Decimal,
    payer: Payer,
    *,
    paid_at: datetime | None = None,
    key: str | None = None,
) -> Received:
    """A PIX from outside, without a charge, received by the caller's account through `key`
    (one of its keys; None: its first)."""
    try:
        amount = amount_cents(value)
    except InvalidAmount as exc:
        raise ValidationFailed([f"value: {exc}"]) from exc
    counterpart = _external_payer(payer)
    at = _paid_at(rt, paid_at)
    async with rt.db.begin() as conn:
        return await receive(
            conn,
            rt.settings,
            account_id,
            amount,
            payer=counterpart,
            end_to_end_id=new_end_to_end_id(counterpart.ispb, at),
            at=at,
            key=await _key_of_account(conn, account_id, key),
            payer_message=payer.message,
        )


async def _key_of_account(conn: Connection, account_id: int, key: str | None) -> str | None:
    """`key` if the account holds it (ValidationFailed if not), or the account's first key."""
    keys = [held.key for held in await keys_of(conn, account_id)]
    if key is None:
        return keys[0] if keys else None
    key_type = dict_key_type(key)
    canonical = normalize_key(key, key_type) if key_type is not None else key
    if canonical not in keys:
        raise ValidationFailed(["chave: not a key of this account"])
    return canonical
