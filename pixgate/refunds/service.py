"""Refunds: one service behind both families.

A refund of a received PIX, asked for by `POST /api/pix/refund-in/{id}` (`refund_in`) or
`PUT /pix/{e2eid}/devolucao/{id}` (`devolucao`), is one REFUND_IN transaction whose
`parent_id` is the original. `refunds.queries.refunds.create` (the database function
`refund_create()`) locks the original, refuses what the refundable-balance rule or the
refund window refuse, and writes the PENDING row, the hold of its amount (no fee; the
outgoing limits do not count refunds) and its settlement job, in one transaction. The
settling bank then returns the money (`send_return`, the settlement hook of the refund
kinds in `payouts.service.settlement`): PENDING becomes CONFIRMED (the hold posted) or
ERROR (the hold voided), and the `refund_in` event is written. The refund's externalId is
the devolucao's `id`, so a refund made through one family is read through the other under
that id.

A PIX that another of our accounts paid (it paid the receiver's charge with a QR cash-out,
`payouts.service.cash_out_qrcode`) never leaves the house when it is returned: its refund is
created the same way, and settles in one transaction without the bank (`settle_in_house`,
tried first by the refund kinds' settlement): the refund CONFIRMED and the payer credited
with a REFUND_OUT of its cash-out, both events written. Settled at settlement rather than
at creation, so that every family (and an approved MED case, whose transaction already holds
the receiver's account) creates its refund by the one rule, and the job's conditional
settlement makes a second run change nothing.

`refund_out` is the other direction (sandbox only): the receiver of one of our cash-outs
returns money, a REFUND_OUT credited at once; not for a cash-out paid to another of our
accounts, which that account returns with a refund.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pixgate.core.db.pool import Connection
from pixgate.core.errors import (
    DevolucaoDeadlineExceeded,
    DevolucaoInsufficientBalance,
    InsufficientBalance,
    NotFound,
    RefundDeadlineExceeded,
    RefundIdReused,
    ValidationFailed,
)
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.money import InvalidAmount, amount_cents
from pixgate.ledger.public import Transaction
from pixgate.payouts.public import external_ids
from pixgate.provider import instructions as provider_instructions
from pixgate.provider.base import (
    NO_INSTRUCTIONS,
    Instructions,
    PaymentResult,
    ReturnOrder,
    SettlingBank,
)
from pixgate.refunds.queries import received as received_rows
from pixgate.refunds.queries import refunds as rows
from pixgate.refunds.rules import (
    REQUESTABLE,
    Natureza,
    PixQuery,
    ReceivedPage,
    ReceivedPix,
    RefundKind,
)
from pixgate.runtime import Runtime

Refund = rows.Refund

_ISPB = re.compile(r"[0-9]{8}")


@dataclass(frozen=True, slots=True)
class RefundOrder:
    """A refund of a received PIX, as either family asks for it."""

    amount: int
    external_id: str
    description: str | None = None
    natureza: Natureza = Natureza.ORIGINAL


@dataclass(frozen=True, slots=True)
class Devolucao:
    refund: Refund
    replayed: bool
    """The refund this `id` already named (a repeated PUT): nothing was created."""


def amount_of(value: Decimal | str, field: str) -> int:
    """Cents of a refund value (`money.amount_cents`), else a field error."""
    try:
        return amount_cents(value)
    except InvalidAmount as exc:
        raise ValidationFailed([f"{field}: {exc}"]) from exc


def new_external_id() -> str:
    """An externalId for a refund-in sent without one: 32 of [0-9a-f], a valid devolucao id."""
    return uuid.uuid4().hex


async def refund_in(
    rt: Runtime,
    account_id: int,
    original: uuid.UUID,
    order: RefundOrder,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> Refund:
    """POST /api/pix/refund-in/{id}: the original named by its transactionId. A reused
    externalId answers PIX_DUPLICATE_EXTERNAL_ID, as cash-out does. The provider's
    synchronous refusal answers once the refund would otherwise be accepted: raised in its
    transaction, which then writes nothing (a refund of an unknown PIX, or one its own rules
    refuse, answers that instead)."""
    async with rt.db.begin() as conn:
        found = await rows.original_by_transaction_id(conn, account_id, original)
        if found is None:
            raise NotFound(f"transaction {original} not found")
        created = await _create(
            rt, conn, account_id, found, order, RefundKind.REFUND_IN, instructions
        )
        if created is None:
            raise await external_ids.duplicate(conn, account_id, order.external_id)
        rt.provider.refuse_return(instructions)
    return created


async def devolucao(
    rt: Runtime,
    account_id: int,
    end_to_end_id: str,
    order: RefundOrder,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> Devolucao:
    """PUT /pix/{e2eid}/devolucao/{id} (`order.external_id` is the `id`).

    A repeat of the same e2eid and id with the same valor, natureza and descricao answers
    the refund it made and creates nothing; with anything else, RefundIdReused (the Central
    Bank's PixDevolucaoInvalida: an id already used). A closed window and a short balance
    answer 422 in this family, the provider's refusal of a short balance included.
    """
    if order.natureza not in REQUESTABLE:
        raise ValidationFailed([f"natureza: {order.natureza} cannot be requested"])
    try:
        async with rt.db.begin() as conn:
            found = await rows.original_by_end_to_end_id(conn, account_id, end_to_end_id)
            if found is None:
                raise NotFound(f"no PIX received with end-to-end id {end_to_end_id}")
            created = await _create(
                rt, conn, account_id, found, order, RefundKind.DEVOLUCAO, instructions
            )
            if created is None:
                existing = await rows.by_external_id(conn, account_id, order.external_id)
                return Devolucao(_replayed(existing, end_to_end_id, order), replayed=True)
            rt.provider.refuse_return(instructions)
    except RefundDeadlineExceeded as exc:
        raise DevolucaoDeadlineExceeded(exc.text, details=exc.details) from None
    except InsufficientBalance as exc:
        raise DevolucaoInsufficientBalance(exc.text, details=exc.details) from None
    return Devolucao(created, replayed=False)


async def get_devolucao(rt: Runtime, account_id: int, end_to_end_id: str, refund_id: str) -> Refund:
    """GET /pix/{e2eid}/devolucao/{id}: the account's refund `id` of that PIX, whichever
    family made it."""
    async with rt.db.connection() as conn:
        found = await rows.by_external_id(conn, account_id, refund_id)
    if found is None or found.original_end_to_end_id != end_to_end_id:
        raise NotFound(f"no refund {refund_id} of end-to-end id {end_to_end_id}")
    return found


async def received(rt: Runtime, account_id: int, end_to_end_id: str) -> ReceivedPix:
    """GET /pix/{e2eid}: a PIX the account received, with its refunds."""
    async with rt.db.connection() as conn:
        found = await received_rows.received_pix(conn, account_id, end_to_end_id)
    if found is None:
        raise NotFound(f"no PIX received with end-to-end id {end_to_end_id}")
    return found


async def received_list(rt: Runtime, account_id: int, query: PixQuery) -> ReceivedPage:
    """GET /pix: a page of the PIX the account received in a period."""
    if query.end < query.start:
        raise ValidationFailed(["fim: must not be before inicio"])
    if query.cpf is not None and query.cnpj is not None:
        raise ValidationFailed(["cnpj: cannot be used together with cpf"])
    async with rt.db.connection() as conn:
        return await received_rows.received_page(conn, account_id, query)


async def refund_out(rt: Runtime, account_id: int, original: uuid.UUID, value: Decimal) -> Refund:
    """Sandbox: the receiver of one of the account's CONFIRMED cash-outs returns
    `value` of it; credited at once, never more in all than the cash-out."""
    amount = amount_of(value, "value")
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        found = await rows.original_by_transaction_id(conn, account_id, original)
        if found is None:
            raise NotFound(f"transaction {original} not found")
        ispb = found.counterpart_ispb
        returned_by = ispb if ispb and _ISPB.fullmatch(ispb) else rt.settings.ispb
        return await rows.credit_return(
            conn,
            account_id,
            found.id,
            amount=amount,
            end_to_end_id=new_end_to_end_id(returned_by, now, "D"),
            at=now,
            ispb=rt.settings.ispb,
        )


async def return_for_med(
    conn: Connection,
    rt: Runtime,
    account_id: int,
    *,
    original_id: int,
    amount: int,
    nature: str,
    case_id: int,
) -> int | None:
    """An approved MED case's return to the payer, in the caller's transaction: a refund of
    kind `med` with the case's `natureza` (MED_FRAUDE or MED_OPERACIONAL), settled like the
    others. At most what is left to refund of the PIX (the refundable-balance rule counts
    every refund, whichever way it came); None, and nothing written, when nothing is left.
    The caller must hold the PIX's row lock (`med.queries.release` takes it).
    The refund window does not apply: the MED has deadlines of its own. Its id, numeric."""
    found = await rows.original_by_id(conn, account_id, original_id)
    if found is None:
        raise NotFound(f"transaction {original_id} not found")
    # the caller (med.service) holds the PIX's row lock: what is left cannot change meanwhile
    amount = min(amount, await rows.refundable(conn, original_id))
    if amount <= 0:
        return None
    order = RefundOrder(
        amount=amount,
        external_id=new_external_id(),
        description=f"MED {case_id}",
        natureza=Natureza(nature),
    )
    refund = await _create(
        rt, conn, account_id, found, order, RefundKind.MED, NO_INSTRUCTIONS, window_days=None
    )
    if refund is None:
        raise RuntimeError("a fresh random externalId was already taken")
    return refund.id


async def _create(
    rt: Runtime,
    conn: Connection,
    account_id: int,
    original: rows.Original,
    order: RefundOrder,
    kind: RefundKind,
    instructions: Instructions,
    *,
    window_days: int | Literal["setting"] | None = "setting",
) -> Refund | None:
    """The PENDING refund, held and queued, with the request's provider instructions kept
    for its settlement; None when its externalId is taken (nothing written)."""
    now = rt.clock.now()
    created = await rows.create(
        conn,
        rows.NewRefund(
            account_id=account_id,
            original_id=original.id,
            kind=kind,
            external_id=order.external_id,
            amount=order.amount,
            end_to_end_id=new_end_to_end_id(rt.settings.ispb, now, "D"),
            description=order.description,
            natureza=order.natureza,
            created_at=now,
            run_at=now + rt.provider.settlement_delay(instructions),
            window_days=rt.settings.refund_window_days if window_days == "setting" else window_days,
            timezone=rt.settings.timezone,
            details={
                "providerTransactionId": str(uuid.uuid4()),
                "originalEndToEndId": original.end_to_end_id,
            },
        ),
    )
    if created is not None:
        await provider_instructions.keep(conn, created.id, instructions.value)
    return created


def _replayed(existing: Refund | None, end_to_end_id: str, order: RefundOrder) -> Refund:
    if existing is None or existing.original_end_to_end_id != end_to_end_id:
        raise RefundIdReused(
            f"id {order.external_id} is already used by another transaction of this account"
        )
    same = (
        existing.amount == order.amount
        and existing.natureza == order.natureza
        and existing.description == order.description
    )
    if not same:
        raise RefundIdReused(
            f"id {order.external_id} already names a refund of this PIX with another valor, "
            "natureza or descricao"
        )
    return existing


# --- settlement ---------------------------------------------------------------------------


def return_order(row: Transaction, now: datetime) -> ReturnOrder:
    """What the settling bank is asked to return, from a PENDING refund row."""
    details: dict[str, Any] = row.details
    return ReturnOrder(
        transaction_pk=row.id,
        amount=row.amount,
        original_end_to_end_id=details.get("originalEndToEndId") or "",
        return_id=row.end_to_end_id or "",
        natureza=details.get("natureza") or Natureza.ORIGINAL,
        at=now,
    )


async def settle_in_house(rt: Runtime, row: Transaction) -> bool:
    """The settlement of a PENDING refund whose PIX another of our accounts paid: settled in
    the house, in one transaction, and True (also when another run settled it meanwhile);
    False, and nothing written, for a PIX from another bank, which `send_return` returns.
    The sandbox's settlement-error scenarios do not apply in the house."""
    if row.counterpart_account_id is None:  # the payer banks elsewhere: no query
        return False
    async with rt.db.begin() as conn:
        return await rows.settle_in_house(conn, row.id, ispb=rt.settings.ispb, at=rt.clock.now())


async def send_return(bank: SettlingBank, row: Transaction, now: datetime) -> PaymentResult:
    """The settlement hook of the refund kinds: a return, not a payment to a key."""
    return await bank.refund(return_order(row, now))
