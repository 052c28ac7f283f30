"""POST /api/pix/cash-out (4.2, 7.3): a PIX sent to a key, settled later by the settling bank.

One transaction: insert the PENDING transaction (a reused externalId is refused), enqueue
its settlement, hold amount + fee, check the limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from pixgate.db import jobs, payments
from pixgate.db.pool import Connection
from pixgate.domain import scenarios
from pixgate.domain.documents import document_kind, only_document_chars
from pixgate.domain.errors import (
    DuplicateExternalId,
    InsufficientBalance,
    InvalidAmount,
    InvalidPixKey,
    NotFound,
    PixgateError,
    ProviderUnavailable,
    ValidationFailed,
)
from pixgate.domain.limits import Window
from pixgate.domain.money import InvalidAmount as BadAmount
from pixgate.domain.money import to_cents
from pixgate.domain.pix_keys import KeyType, is_valid_cash_out_key, normalize_key
from pixgate.runtime import Runtime
from pixgate.services import fees, limits

FEE_KEY = "cash_out"
# A payout priced from terms that changed meanwhile is priced again, at most this often.
TERMS_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class CashOutOrder:
    value: Decimal
    external_id: str
    key: str
    key_type: KeyType
    name: str
    document: str
    check_document: bool = False
    description: str | None = None


@dataclass(frozen=True, slots=True)
class CashOut:
    transaction_id: UUID
    external_id: str
    status: str
    created_at: datetime


def amount_of(value: Decimal) -> int:
    """Cents of a payment value: at least 0.01 with at most 2 decimals, else PIX_INVALID_AMOUNT."""
    try:
        amount = to_cents(value)
    except BadAmount as exc:
        raise InvalidAmount(f"value: {exc}") from exc
    if amount < 1:
        raise InvalidAmount("value must be at least 0.01")
    return amount


def raise_synchronous_scenario(scenario: str | None) -> None:
    """The synchronous sandbox scenarios answer as the real error would, before any write."""
    if scenario == "INSUFFICIENT_FUNDS":
        raise InsufficientBalance("available balance is less than amount + fee (sandbox)")
    if scenario == "INVALID_PIX_KEY":
        raise InvalidPixKey("the PIX key was refused by the settling bank (sandbox)")
    if scenario == "PROVIDER_UNAVAILABLE":
        raise ProviderUnavailable("the settling bank could not be reached (sandbox)")


async def create(
    rt: Runtime, account_id: int, order: CashOutOrder, *, scenario: str | None = None
) -> CashOut:
    amount = amount_of(order.value)
    if not is_valid_cash_out_key(order.key, order.key_type):
        raise InvalidPixKey(f"details.key is not a valid {order.key_type} key")
    document = only_document_chars(order.document)
    if document_kind(document) is None:
        raise ValidationFailed(
            ["details.document must be a CPF (11 digits) or a CNPJ (14 characters)"]
        )
    raise_synchronous_scenario(scenario)
    payout = PendingPayout(
        kind="cash_out",
        external_id=order.external_id,
        amount=amount,
        pix_key=normalize_key(order.key, order.key_type),
        pix_key_type=order.key_type.value,
        description=order.description,
        details={
            "name": order.name,
            "document": document,
            "checkPixKeyWithDocument": order.check_document,
            "scenario": scenario,
        },
    )
    return await hold_pending(rt, account_id, payout, scenario=scenario)


@dataclass(frozen=True, slots=True)
class PendingPayout:
    """An outgoing PIX to be settled by the settling bank: what the PENDING row records."""

    kind: str
    external_id: str
    amount: int
    pix_key: str
    pix_key_type: str
    description: str | None
    details: dict[str, Any]


async def hold_pending(
    rt: Runtime,
    account_id: int,
    payout: PendingPayout,
    *,
    scenario: str | None,
    duplicate: type[DuplicateExternalId] = DuplicateExternalId,
) -> CashOut:
    """The PENDING row, its settlement job, the hold and the limit count, in one statement.

    `payments.hold_payout` is one round trip and its own transaction (it was seven round
    trips, the largest single share of the API's CPU per cash-out), shared with the other
    cash-outs of the account that wait for its row meanwhile (`db.batches`). The fee and
    limits are priced from this process's copy of the account's terms, which the statement
    compares with the locked row: a stale copy is re-read and the payout tried again.
    """
    now = rt.clock.now()
    run_at = now + timedelta(
        milliseconds=scenarios.settlement_delay_ms(scenario, rt.settings.settlement_delay_ms)
    )
    for _ in range(TERMS_ATTEMPTS):
        terms = await rt.account_terms.get(rt.db, account_id)
        if terms is None:
            raise NotFound("account not found")
        fee = fees.of(rt.settings, terms["fees"], FEE_KEY, payout.amount)
        window = limits.window(rt.settings, terms, now)
        try:
            row = await payments.hold_payout(
                rt.db,
                payments.Hold(
                    account_id=account_id,
                    kind=payout.kind,
                    external_id=payout.external_id,
                    amount=payout.amount,
                    fee=fee,
                    pix_key=payout.pix_key,
                    pix_key_type=payout.pix_key_type,
                    description=payout.description,
                    details=payout.details,
                    created_at=now,
                    job=jobs.SETTLE_PAYOUT,
                    run_at=run_at,
                    terms=terms,
                    limits=window,
                ),
            )
        except payments.PayoutRefused as refused:
            if refused.reason == "terms":
                rt.account_terms.forget(account_id)
                continue
            raise _refusal(refused, window, payout.amount) from None
        if row is None:
            async with rt.db.connection() as conn:
                await refuse_duplicate(conn, account_id, payout.external_id, duplicate)
            raise AssertionError("unreachable: a conflicting externalId must be visible")
        return CashOut(
            transaction_id=row["transaction_id"],
            external_id=payout.external_id,
            status="PENDING",
            created_at=row["created_at"],
        )
    raise PixgateError("the account's fees or limits kept changing; retry")


def _refusal(refused: payments.PayoutRefused, window: Window, amount: int) -> PixgateError:
    if refused.reason == "balance":
        return InsufficientBalance("available balance is less than amount + fee")
    return limits.refusal(window, refused.reason, refused.used, amount)


async def refuse_duplicate(
    conn: Connection,
    account_id: int,
    external_id: str,
    error: type[DuplicateExternalId] = DuplicateExternalId,
) -> None:
    existing = await payments.by_external_id(conn, account_id, external_id)
    if existing is not None:
        raise error(
            f"externalId {external_id} was already used",
            details={"externalId": external_id, "existingTransactionId": str(existing)},
        )
