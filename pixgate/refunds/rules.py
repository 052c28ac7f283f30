"""Refunds: their kinds, the Central Bank's `natureza` and devolucao statuses, and
the identifiers a refund request may carry.

The rules that count money (what is left to refund, the refund window) are the database's
(`pixgate/refunds/sql/050_refunds.sql`); this module only names things and maps states.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from pixgate.core.labels import TransactionStatus
from pixgate.core.money import format_amount
from pixgate.core.timestamps import iso


class RefundKind(StrEnum):
    """`transactions.kind` of a refund: which door it came through."""

    REFUND_IN = "refund_in"
    """POST /api/pix/refund-in/{id} (public family)."""
    DEVOLUCAO = "devolucao"
    """PUT /pix/{e2eid}/devolucao/{id} (Central-Bank-style family)."""
    MED = "med"
    """An approved MED case's return to the payer."""
    REFUND_OUT = "refund_out"
    """A cash-out returned by its receiver (a REFUND_OUT credit)."""


RETURN_KINDS: Final = frozenset({RefundKind.REFUND_IN, RefundKind.DEVOLUCAO, RefundKind.MED})
"""The kinds of REFUND_IN: held at creation and settled by the settling bank (a return)."""


class Natureza(StrEnum):
    """Why money is returned (the Central Bank's DevolucaoNatureza)."""

    ORIGINAL = "ORIGINAL"
    RETIRADA = "RETIRADA"
    MED_OPERACIONAL = "MED_OPERACIONAL"
    MED_FRAUDE = "MED_FRAUDE"


REQUESTABLE: Final = frozenset({Natureza.ORIGINAL, Natureza.RETIRADA})
"""What a client may send; the MED natures are only answered."""


class DevolucaoStatus(StrEnum):
    EM_PROCESSAMENTO = "EM_PROCESSAMENTO"
    DEVOLVIDO = "DEVOLVIDO"
    NAO_REALIZADO = "NAO_REALIZADO"


DEVOLUCAO_STATUS: Final[dict[str, DevolucaoStatus]] = {
    TransactionStatus.PENDING: DevolucaoStatus.EM_PROCESSAMENTO,
    TransactionStatus.CONFIRMED: DevolucaoStatus.DEVOLVIDO,
    TransactionStatus.ERROR: DevolucaoStatus.NAO_REALIZADO,
}
"""A refund's transaction status as a devolucao shows it."""

REFUND_ID_PATTERN: Final = r"^[a-zA-Z0-9]{1,35}$"
"""A devolucao `id`, also a refund's externalId (the Central Bank's DevolucaoId)."""
END_TO_END_PATTERN: Final = r"^[a-zA-Z0-9]{32}$"
"""An end-to-end id as the Central Bank's API takes it in a path."""
MOTIVO_MAX: Final = 140
"""A devolucao's `motivo` holds at most this many characters."""
PAYER_MESSAGE_MAX: Final = 140
"""A Pix's `infoPagador` holds at most this many characters."""


def motivo(error_message: str | None) -> str | None:
    """A failed refund's reason, cut to what the `motivo` field holds."""
    return error_message[:MOTIVO_MAX] if error_message else None


@dataclass(frozen=True, slots=True)
class Devolucao:
    """A refund of a received PIX as the Central Bank's `Devolucao` shows it, whichever door
    it came through (refund-in, devolucao, MED)."""

    id: str
    """Its client id (the refund's externalId)."""
    rtr_id: str
    """Its own end-to-end id (`D...`)."""
    amount: int
    natureza: Natureza
    description: str | None
    status: TransactionStatus
    requested_at: datetime
    settled_at: datetime | None
    error_message: str | None


@dataclass(frozen=True, slots=True)
class ReceivedPix:
    """A PIX the account received (a CONFIRMED PAYMENT: a charge or cob paid, a PIX without a
    charge, or one from another of our accounts) with its refunds, oldest first."""

    id: int
    account_id: int
    end_to_end_id: str
    txid: str | None
    """The charge's txid when it paid one."""
    amount: int
    key: str | None
    """The key that received it (`transactions.pix_key`)."""
    at: datetime
    """When it was credited."""
    payer_message: str | None
    devolucoes: tuple[Devolucao, ...]


@dataclass(frozen=True, slots=True)
class PixQuery:
    """GET /pix: the account's received PIX credited from `start` to `end` (both included),
    narrowed by the filters given (None: not filtered), one page of them."""

    start: datetime
    end: datetime
    txid: str | None
    txid_present: bool | None
    refund_present: bool | None
    cpf: str | None
    """The payer's CPF (not with `cnpj`)."""
    cnpj: str | None
    page: int
    """0-based, as the Central Bank's `paginacao.paginaAtual`."""
    per_page: int


@dataclass(frozen=True, slots=True)
class ReceivedPage:
    items: tuple[ReceivedPix, ...]
    total: int
    """How many received PIX match, over every page."""


def devolucao_body(devolucao: Devolucao) -> dict[str, Any]:
    """The Central Bank's `Devolucao` object: `horario.liquidacao` once DEVOLVIDO, `motivo`
    once NAO_REALIZADO, members without a value left out."""
    status = DEVOLUCAO_STATUS[devolucao.status]
    horario: dict[str, Any] = {"solicitacao": iso(devolucao.requested_at)}
    if status is DevolucaoStatus.DEVOLVIDO and devolucao.settled_at is not None:
        horario["liquidacao"] = iso(devolucao.settled_at)
    body: dict[str, Any] = {
        "id": devolucao.id,
        "rtrId": devolucao.rtr_id,
        "valor": format_amount(devolucao.amount),
        "natureza": str(devolucao.natureza),
    }
    if devolucao.description is not None:
        body["descricao"] = devolucao.description
    body["horario"] = horario
    body["status"] = str(status)
    reason = motivo(devolucao.error_message) if status is DevolucaoStatus.NAO_REALIZADO else None
    if reason is not None:
        body["motivo"] = reason
    return body


def pix_body(received: ReceivedPix) -> dict[str, Any]:
    """The Central Bank's `Pix` object (GET /pix, GET /pix/{e2eid} and the webhook by key's
    `pix` list); `txid`, `chave` and `infoPagador` only when there is one, `devolucoes`
    only when there are any."""
    body: dict[str, Any] = {"endToEndId": received.end_to_end_id}
    if received.txid is not None:
        body["txid"] = received.txid
    body["valor"] = format_amount(received.amount)
    if received.key is not None:
        body["chave"] = received.key
    body["horario"] = iso(received.at)
    if received.payer_message is not None:
        body["infoPagador"] = received.payer_message[:PAYER_MESSAGE_MAX]
    if received.devolucoes:
        body["devolucoes"] = [devolucao_body(d) for d in received.devolucoes]
    return body
