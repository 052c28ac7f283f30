"""Immediate charges of the Central-Bank family: PUT, GET and PATCH /cob/{txid}.

A cob is a charge of kind `cob` with a PENDING PAYMENT transaction, created ATIVA with
revision 0. PATCH revises the editable fields (revision + 1; a new amount means a new
copy-and-paste code at the same location) or cancels it. An unpaid cob whose
expiration passed is REMOVIDA_PELO_PSP: a job moves it at that moment, and reads report
it even before the job ran. Paying it (charges.service.charges.pay) makes it CONCLUIDA.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from pixgate.accounts.public import get_account
from pixgate.charges.queries import charge_lifecycle
from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries.charges import Charge
from pixgate.charges.service.expiry import status_at
from pixgate.charges.service.locations import location_url, new_location_token
from pixgate.core import brcode
from pixgate.core.errors import Conflict, NotFound, ValidationFailed
from pixgate.core.labels import ChargeStatus, TransactionKind
from pixgate.core.money import to_cents
from pixgate.jobs.public import queue as jobs
from pixgate.ledger.public import Transaction
from pixgate.provider.base import NO_INSTRUCTIONS, ChargeRegistration, Instructions
from pixgate.runtime import Runtime

KIND = TransactionKind.COB
CANCELLED = ChargeStatus.REMOVIDA_PELO_USUARIO_RECEBEDOR


@dataclass(frozen=True, slots=True)
class CobInput:
    """The editable fields; PATCH leaves None ones as they are."""

    expiracao: int | None = None
    devedor: dict[str, str] | None = None
    original: str | None = None
    modalidade_alteracao: int | None = None
    chave: str | None = None
    solicitacao_pagador: str | None = None
    info_adicionais: list[dict[str, str]] | None = None


@dataclass(frozen=True, slots=True)
class Cob:
    charge: Charge
    status: ChargeStatus
    payment: Transaction | None


async def create(
    rt: Runtime,
    account_id: int,
    txid: str,
    data: CobInput,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> Cob:
    if data.expiracao is None or data.original is None:
        raise ValidationFailed(["calendario.expiracao and valor.original are required"])
    amount = to_cents(Decimal(data.original))
    # A txid in use is the request's own error: found before the settling bank is asked
    # (which may refuse as the request's instructions tell it); the insert still refuses
    # a concurrent one.
    async with rt.db.connection() as conn:
        if await charge_rows.by_txid(conn, account_id, KIND, txid) is not None:
            raise Conflict(f"txid {txid} already exists")
    await rt.provider.register_charge(
        ChargeRegistration(amount=amount, expires_in=data.expiracao, instructions=instructions)
    )
    now = rt.clock.now()
    token = new_location_token()
    async with rt.db.begin() as conn:
        account = await get_account(conn, account_id)
        if account is None:
            raise NotFound("account not found")
        try:
            created = await charge_rows.insert(
                conn,
                account_id=account_id,
                kind=KIND,
                external_id=None,
                amount=amount,
                description=data.solicitacao_pagador,
                details={"txid": txid},
                txid=txid,
                location_token=token,
                pix_code=_pix_code(rt, account.name, token, amount),
                status=ChargeStatus.ATIVA,
                expires_at=now + timedelta(seconds=data.expiracao),
                body=_body(data, {}),
                created_at=now,
            )
        except charge_rows.DuplicateCharge as exc:
            raise Conflict(f"txid {txid} already exists") from exc
        assert created is not None
        charge = created.charge
        await jobs.enqueue(
            conn, jobs.EXPIRE_CHARGE, jobs.ExpireCharge(charge.id), run_at=charge.expires_at
        )
    return Cob(charge=charge, status=ChargeStatus.ATIVA, payment=None)


async def get(rt: Runtime, account_id: int, txid: str) -> Cob:
    async with rt.db.connection() as conn:
        charge = await charge_rows.by_txid(conn, account_id, KIND, txid)
        if charge is None:
            raise NotFound(f"cob {txid} not found")
        payment = await charge_lifecycle.payment_of(conn, charge.transaction_id)
    return Cob(charge=charge, status=status_at(charge, rt.clock.now()), payment=payment)


async def revise(rt: Runtime, account_id: int, txid: str, data: CobInput, *, cancel: bool) -> Cob:
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        charge = await charge_lifecycle.lock_by_txid(conn, account_id, KIND, txid)
        if charge is None:
            raise NotFound(f"cob {txid} not found")
        if status_at(charge, now) != ChargeStatus.ATIVA:
            raise ValidationFailed(
                [f"cob {txid} is {status_at(charge, now)}; only an ATIVA cob can be changed"]
            )
        if cancel:
            closed = await charge_lifecycle.close(
                conn,
                charge.id,
                status=CANCELLED,
                error_code="REMOVED_BY_RECEIVER",
                now=now,
                only_if_expired=False,
            )
            assert closed is not None
            return Cob(charge=closed, status=CANCELLED, payment=None)
        account = await get_account(conn, account_id)
        assert account is not None
        amount = to_cents(Decimal(data.original)) if data.original else charge.amount
        expires_at = charge.expires_at
        if data.expiracao is not None:
            expires_at = charge.created_at + timedelta(seconds=data.expiracao)
        revised = await charge_lifecycle.revise(
            conn,
            charge.id,
            amount=amount,
            pix_code=_pix_code(rt, account.name, charge.location_token, amount),
            expires_at=expires_at,
            body=_body(data, charge.body),
            now=now,
        )
        if expires_at != charge.expires_at:
            await jobs.enqueue(
                conn, jobs.EXPIRE_CHARGE, jobs.ExpireCharge(charge.id), run_at=expires_at
            )
    return Cob(charge=revised, status=status_at(revised, now), payment=None)


def _pix_code(rt: Runtime, merchant: str, token: str, amount: int) -> str:
    url = location_url(rt.settings, token).split("://", 1)[-1]
    return brcode.encode(brcode.dynamic(url, merchant, rt.settings.merchant_city, amount))


def _body(data: CobInput, current: dict[str, Any]) -> dict[str, Any]:
    """The echo fields of 2.9 as stored: the new values over the current ones."""
    body = dict(current)
    changes = {
        "expiracao": data.expiracao,
        "devedor": data.devedor,
        "modalidadeAlteracao": data.modalidade_alteracao,
        "chave": data.chave,
        "solicitacaoPagador": data.solicitacao_pagador,
        "infoAdicionais": data.info_adicionais,
    }
    body.update({k: v for k, v in changes.items() if v is not None})
    body.setdefault("modalidadeAlteracao", 0)
    return body
