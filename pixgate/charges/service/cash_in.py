"""POST /api/pix/cash-in: a dynamic charge the account receives.

Everything is validated first (one 400 listing every bad field, then the splits against
the amount net of the account's fee) and the BR Code built; then the charge is announced
to the settling bank, outside any transaction, so a provider failure (500) or its minimum
expiration leaves nothing behind, and never hides the request's own error (whatever the
request's provider instructions); then one transaction writes the PENDING
PAYMENT transaction, the charge, its splits and its `charges.expire` job (an unpaid
charge becomes EXPIRED, its payment ERROR). The BR Code is dynamic: its location
(26/25, without scheme) is `{public_url}/qr/v2/{token}`, its merchant the account's name.
Paying the charge is `charges.service.charges.pay`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from pixgate.accounts.public import accounts_queries as account_rows
from pixgate.accounts.public import fees
from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries.charges import SplitRow
from pixgate.charges.service.charges import FEE_KEY
from pixgate.charges.service.locations import location_url, new_location_token
from pixgate.core.errors import NotFound, ValidationFailed
from pixgate.core.ids import new_txid
from pixgate.core.labels import ChargeStatus, TransactionKind
from pixgate.core.money import (
    InvalidAmount,
    SplitType,
    amount_cents,
    format_amount,
    split_value,
    to_cents,
)
from pixgate.core.pix import brcode
from pixgate.core.pix.documents import is_valid_document, only_document_chars
from pixgate.core.pix.keys import SplitKeyType, is_valid_split_key, key_form_error
from pixgate.jobs.public import queue as jobs
from pixgate.payouts.public import external_ids
from pixgate.provider.base import NO_INSTRUCTIONS, ChargeRegistration, Instructions
from pixgate.runtime import Runtime

KIND = TransactionKind.CASH_IN


@dataclass(frozen=True, slots=True)
class SplitOrder:
    pix_key: str
    pix_key_type: SplitKeyType
    name: str
    document: str
    type: SplitType
    value: Decimal
    immediate: bool = False


@dataclass(frozen=True, slots=True)
class CashInOrder:
    value: Decimal
    description: str
    external_id: str
    payer_name: str
    payer_document: str
    expiration_time: int = 86400
    additional_info: dict[str, str] = field(default_factory=dict)
    splits: list[SplitOrder] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CashIn:
    id: int
    transaction_id: UUID
    correlation_id: UUID
    external_id: str
    status: str
    pix_code: str
    location_token: str
    created_at: datetime
    expires_at: datetime


Charge = charge_rows.PaidCharge
"""A charge as its account sees it later (the dashboard's charge page)."""


def _cents(value: Decimal, where: str, problems: list[str]) -> int:
    try:
        return amount_cents(value)
    except InvalidAmount as exc:
        problems.append(f"{where}: {exc}")
        return 0


def _split_problems(index: int, split: SplitOrder, problems: list[str]) -> None:
    where = f"splits.{index}"
    if not is_valid_split_key(split.pix_key, split.pix_key_type):
        problems.append(key_form_error(f"{where}.pixKey", split.pix_key_type))
    if not is_valid_document(only_document_chars(split.document)):
        problems.append(f"{where}.document: not a valid CPF or CNPJ")
    try:
        value = split_value(split.value)
    except InvalidAmount as exc:
        problems.append(f"{where}.value: {exc}")
        return
    if split.type == "FIXED":
        _cents(value, f"{where}.value", problems)


def splits_total(amount: int, splits: list[SplitOrder]) -> Decimal:
    """What the splits take of `amount` cents, in exact (unrounded) cents: 60% and 40.01%
    of 10.00 is 1000.1 cents, more than the amount, although each share rounds to fit."""
    return sum(
        (
            Decimal(to_cents(s.value)) if s.type == "FIXED" else amount * s.value / 100
            for s in splits
        ),
        Decimal(0),
    )


def validate(order: CashInOrder) -> tuple[int, list[SplitRow]]:
    """The amount in cents and the split rows, or ValidationFailed listing every problem."""
    problems: list[str] = []
    amount = _cents(order.value, "transaction.value", problems)
    if not is_valid_document(only_document_chars(order.payer_document)):
        problems.append("payer.document: not a valid CPF or CNPJ")
    for index, split in enumerate(order.splits):
        _split_problems(index, split, problems)
    if not problems and splits_total(amount, order.splits) > amount:
        problems.append("splits: the splits add up to more than transaction.value")
    if problems:
        raise ValidationFailed(problems)
    rows = [
        SplitRow(
            pix_key=s.pix_key,
            pix_key_type=s.pix_key_type.value,
            name=s.name,
            document=only_document_chars(s.document),
            split_type=s.type,
            value=s.value,
            immediate=s.immediate,
        )
        for s in order.splits
    ]
    return amount, rows


async def create(
    rt: Runtime,
    account_id: int,
    order: CashInOrder,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> CashIn:
    amount, split_rows = validate(order)
    async with rt.db.connection() as conn:
        account = await account_rows.get(conn, account_id)
    if account is None:
        raise NotFound("account not found")
    if order.splits:
        _splits_fit_net(rt, account.fees, amount, order.splits)
    token = new_location_token()
    pix_code = brcode.encode(
        brcode.dynamic(
            location_url(rt.settings, token).split("://", 1)[-1],
            account.name,
            rt.settings.merchant_city,
            amount,
        )
    )
    await rt.provider.register_charge(
        ChargeRegistration(
            amount=amount, expires_in=order.expiration_time, instructions=instructions
        )
    )
    now = rt.clock.now()
    expires_at = now + timedelta(seconds=order.expiration_time)
    correlation_id = uuid.uuid4()
    payer = {"fullName": order.payer_name, "document": only_document_chars(order.payer_document)}
    async with rt.db.begin() as conn:
        created = await charge_rows.insert(
            conn,
            account_id=account_id,
            kind=KIND,
            external_id=order.external_id,
            amount=amount,
            description=order.description,
            details={
                "correlationId": str(correlation_id),
                "payer": payer,
                "additionalInfo": order.additional_info,
            },
            txid=new_txid(32),
            location_token=token,
            pix_code=pix_code,
            status=ChargeStatus.PENDING,
            expires_at=expires_at,
            body={"correlationId": str(correlation_id), "expirationTime": order.expiration_time},
            created_at=now,
        )
        if created is None:
            raise await external_ids.duplicate(conn, account_id, order.external_id)
        charge = created.charge
        await charge_rows.insert_splits(conn, charge.id, split_rows)
        await jobs.enqueue(
            conn, jobs.EXPIRE_CHARGE, jobs.ExpireCharge(charge.id), run_at=expires_at
        )
    return CashIn(
        id=charge.transaction_id,
        transaction_id=created.payment_uuid,
        correlation_id=correlation_id,
        external_id=order.external_id,
        status=ChargeStatus.PENDING,
        pix_code=pix_code,
        location_token=token,
        created_at=now,
        expires_at=expires_at,
    )


async def find(rt: Runtime, account_id: int, transaction_id: UUID) -> Charge:
    """The account's charge (cash-in or cob) by its payment's transactionId; another
    account's is NotFound."""
    async with rt.db.connection() as conn:
        found = await charge_rows.by_payment(conn, account_id, transaction_id)
    if found is None:
        raise NotFound("charge not found")
    return found


def _splits_fit_net(
    rt: Runtime, account_fees: dict[str, Any], amount: int, splits: list[SplitOrder]
) -> None:
    """The splits are paid out of what the account receives: amount minus the cash-in fee."""
    fee = fees.of(rt.settings, account_fees, FEE_KEY, amount)
    if fee and splits_total(amount, splits) > amount - fee:
        raise ValidationFailed(
            [
                f"splits: the splits add up to more than transaction.value net of the cash-in "
                f"fee ({format_amount(amount - fee)})"
            ]
        )
