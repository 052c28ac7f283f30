"""Immediate charges (cob), shared by both families: the root-level `/cob/{txid}` of our
spec and the API Pix's `/cob` under its base path.

A cob is a charge of kind `cob` with a PENDING PAYMENT transaction, created ATIVA with
revision 0 and served at a payload location (a new one, or the account's free location
named by `loc.id`). Each PATCH is a revision (revision + 1, kept in `charge_revisions`); a
new amount means a new copy-and-paste code at the same location; moving the cob to another
location is not a revision. An unpaid cob whose expiration passed is REMOVIDA_PELO_PSP: a
job moves it at that moment, and reads report it even before the job ran. Paying it
(charges.service.charges.pay) makes it CONCLUIDA.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from pixgate.accounts.public import get_account, key_owner, keys_of
from pixgate.charges.queries import charge_lifecycle, revisions
from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries import locations as location_rows
from pixgate.charges.queries.charges import Charge
from pixgate.charges.queries.locations import Location
from pixgate.charges.service.expiry import status_at
from pixgate.charges.service.locations import location_text, new_location_token
from pixgate.core.db.pool import Connection
from pixgate.core.errors import Conflict, NotFound, ValidationFailed
from pixgate.core.ids import new_txid
from pixgate.core.labels import ChargeStatus, TransactionKind
from pixgate.core.money import to_cents
from pixgate.core.pix import brcode
from pixgate.core.pix.keys import DICT_KEY_FORM, dict_key_type, normalize_key
from pixgate.jobs.public import queue as jobs
from pixgate.ledger.public import Transaction
from pixgate.provider.base import NO_INSTRUCTIONS, ChargeRegistration, Instructions
from pixgate.runtime import Runtime

KIND = TransactionKind.COB
CANCELLED = ChargeStatus.REMOVIDA_PELO_USUARIO_RECEBEDOR
GENERATED_TXID_LENGTH = 32
"""`POST /cob`: the PSP picks the txid; 32 letters and digits, within the document's 26-35."""


@dataclass(frozen=True, slots=True)
class CobInput:
    """The editable fields; PATCH leaves None ones as they are. `loc_id`: the account's free
    location that serves the cob (a new one when None at creation)."""

    expiracao: int | None = None
    devedor: dict[str, str] | None = None
    original: str | None = None
    modalidade_alteracao: int | None = None
    chave: str | None = None
    solicitacao_pagador: str | None = None
    info_adicionais: list[dict[str, str]] | None = None
    loc_id: int | None = None


@dataclass(frozen=True, slots=True)
class Cob:
    """A cob as read: `charge` at the revision asked for (`current` False for a past one),
    the location serving it now (None once unlinked) and its payment."""

    charge: Charge
    status: ChargeStatus
    payment: Transaction | None
    location: Location | None
    current: bool = True
    key: str = ""
    """The key the cob receives on: its `chave`, or the account's first key for a cob made
    without one (the API Pix's answers require one)."""


async def create(
    rt: Runtime,
    account_id: int,
    txid: str,
    data: CobInput,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
    own_key: bool = False,
) -> Cob:
    """A new cob; `own_key`: `chave` must be one of the account's keys (the API Pix's rule)."""
    if data.expiracao is None or data.original is None:
        raise ValidationFailed(["calendario.expiracao and valor.original are required"])
    amount = to_cents(Decimal(data.original))
    # A txid in use is the request's own error: found before the settling bank is asked
    # (which may refuse as the request's instructions tell it); the insert still refuses
    # a concurrent one.
    async with rt.db.connection() as conn:
        if await charge_rows.by_txid(conn, account_id, KIND, txid) is not None:
            raise Conflict(f"txid {txid} already exists")
        if own_key:
            await _check_key(conn, account_id, data.chave)
    await rt.provider.register_charge(
        ChargeRegistration(amount=amount, expires_in=data.expiracao, instructions=instructions)
    )
    now = rt.clock.now()
    async with rt.db.begin() as conn:
        account = await get_account(conn, account_id)
        if account is None:
            raise NotFound("account not found")
        taken = None if data.loc_id is None else await _free_location(conn, account_id, data.loc_id)
        token = new_location_token() if taken is None else taken.token
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
        location = await _serve(conn, account_id, charge, taken)
        await revisions.record(conn, charge)
        await jobs.enqueue(
            conn, jobs.EXPIRE_CHARGE, jobs.ExpireCharge(charge.id), run_at=charge.expires_at
        )
        key = await receiving_key(conn, charge)
    return Cob(charge, ChargeStatus.ATIVA, None, location, key=key)


async def create_with_txid_of_ours(
    rt: Runtime,
    account_id: int,
    data: CobInput,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
    own_key: bool = False,
) -> Cob:
    """`POST /cob`: a new cob whose txid the gateway picks."""
    txid = new_txid(GENERATED_TXID_LENGTH)
    return await create(rt, account_id, txid, data, instructions=instructions, own_key=own_key)


async def get(rt: Runtime, account_id: int, txid: str, revision: int | None = None) -> Cob:
    """The cob now, or as it was at `revision` (ValidationFailed if it never had it)."""
    async with rt.db.connection() as conn:
        charge = await charge_rows.by_txid(conn, account_id, KIND, txid)
        if charge is None:
            raise NotFound(f"cob {txid} not found")
        location = await location_rows.of_charge(conn, charge.id)
        if revision is not None and revision != charge.revision:
            past = await revisions.get(conn, charge.id, revision)
            if past is None:
                raise ValidationFailed([f"revisao: cob {txid} has no revision {revision}"])
            then = dataclasses.replace(
                charge,
                revision=past.revision,
                status=past.status,
                amount=past.amount,
                expires_at=past.expires_at,
                body=past.body,
            )
            key = await receiving_key(conn, then)
            return Cob(then, past.status, None, location, current=False, key=key)
        payment = await charge_lifecycle.payment_of(conn, charge.transaction_id)
        key = await receiving_key(conn, charge)
    return Cob(charge, status_at(charge, rt.clock.now()), payment, location, key=key)


async def revise(
    rt: Runtime,
    account_id: int,
    txid: str,
    data: CobInput,
    *,
    cancel: bool,
    own_key: bool = False,
) -> Cob:
    """PATCH: the receiver's removal (`cancel`) or new values, each a new revision; a new
    `loc_id` alone moves the cob to that location without one."""
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
                new_revision=True,
            )
            assert closed is not None
            await revisions.record(conn, closed)
            location = await location_rows.of_charge(conn, charge.id)
            key = await receiving_key(conn, closed)
            return Cob(closed, CANCELLED, None, location, key=key)
        if own_key and data.chave is not None:
            await _check_key(conn, account_id, data.chave)
        account = await get_account(conn, account_id)
        assert account is not None
        location = await _relocated(conn, account_id, charge, data.loc_id)
        moving = location is not None and location.charge_id != charge.id
        token = location.token if location is not None and moving else charge.location_token
        revised = charge
        if _edits(data):
            revised = await _new_revision(rt, conn, charge, data, account.name, token, now)
        if location is not None and moving:
            revised = await charge_lifecycle.relocate(
                conn,
                charge.id,
                token=token,
                pix_code=_pix_code(rt, account.name, token, revised.amount),
            )
            location = await _serve(conn, account_id, revised, location)
        key = await receiving_key(conn, revised)
    return Cob(revised, status_at(revised, now), None, location, key=key)


async def receiving_key(conn: Connection, charge: Charge) -> str:
    """The cob's `chave`, or the account's first key (its EVP key) when it has none."""
    chave = charge.body.get("chave")
    if isinstance(chave, str):
        return chave
    keys = await keys_of(conn, charge.account_id)
    return keys[0].key if keys else ""


async def _new_revision(
    rt: Runtime,
    conn: Connection,
    charge: Charge,
    data: CobInput,
    merchant: str,
    token: str,
    now: datetime,
) -> Charge:
    amount = to_cents(Decimal(data.original)) if data.original else charge.amount
    expires_at = charge.expires_at
    if data.expiracao is not None:
        expires_at = charge.created_at + timedelta(seconds=data.expiracao)
    revised = await charge_lifecycle.revise(
        conn,
        charge.id,
        amount=amount,
        pix_code=_pix_code(rt, merchant, token, amount),
        expires_at=expires_at,
        body=_body(data, charge.body),
        now=now,
    )
    await revisions.record(conn, revised)
    if expires_at != charge.expires_at:
        await jobs.enqueue(
            conn, jobs.EXPIRE_CHARGE, jobs.ExpireCharge(charge.id), run_at=expires_at
        )
    return revised


def _edits(data: CobInput) -> bool:
    """Whether a PATCH changes the cob itself (anything but `loc`)."""
    return any(
        value is not None for field, value in dataclasses.asdict(data).items() if field != "loc_id"
    )


async def _relocated(
    conn: Connection, account_id: int, charge: Charge, loc_id: int | None
) -> Location | None:
    """The location serving the cob after the PATCH: the one `loc_id` names (free, or the
    cob's own already), else the current one."""
    current = await location_rows.of_charge(conn, charge.id)
    if loc_id is None or (current is not None and current.id == loc_id):
        return current
    taken = await _free_location(conn, account_id, loc_id)
    if current is not None:
        await location_rows.unlink(conn, current.id)
    return taken


async def _free_location(conn: Connection, account_id: int, loc_id: int) -> Location:
    """The account's location `loc_id`, locked, if a cob may take it."""
    found = await location_rows.get(conn, account_id, loc_id, lock=True)
    if found is None:
        raise ValidationFailed([f"loc.id: location {loc_id} does not exist"])
    if found.tipo_cob != "cob":
        raise ValidationFailed([f"loc.id: location {loc_id} is of tipoCob {found.tipo_cob}"])
    if found.charge_id is not None:
        raise ValidationFailed([f"loc.id: location {loc_id} already serves another cob"])
    return found


async def _serve(
    conn: Connection, account_id: int, charge: Charge, taken: Location | None
) -> Location:
    """The location serves the charge: `taken` (free, locked) or a new one of its token."""
    if taken is None:
        return await location_rows.insert(
            conn,
            account_id=account_id,
            token=charge.location_token,
            tipo_cob="cob",
            charge_id=charge.id,
            created_at=charge.created_at,
        )
    await location_rows.link(conn, taken.id, charge.id)
    return dataclasses.replace(taken, charge_id=charge.id, txid=charge.txid)


async def _check_key(conn: Connection, account_id: int, chave: str | None) -> None:
    """The API Pix's rule: `chave` is a key of the receiving account."""
    key_type = None if chave is None else dict_key_type(chave)
    if chave is None or key_type is None:
        raise ValidationFailed([f"chave: must be {DICT_KEY_FORM}"])
    owner = await key_owner(conn, normalize_key(chave, key_type))
    if owner is None or owner.account_id != account_id:
        raise ValidationFailed(["chave: the key does not belong to this receiving account"])


def _pix_code(rt: Runtime, merchant: str, token: str, amount: int) -> str:
    url = location_text(rt.settings, token)
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
