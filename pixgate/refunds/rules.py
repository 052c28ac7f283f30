"""Refunds: their kinds, the Central Bank's `natureza` and devolucao statuses, and
the identifiers a refund request may carry.

The rules that count money (what is left to refund, the refund window) are the database's
(`pixgate/refunds/sql/050_refunds.sql`); this module only names things and maps states.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pixgate.core.labels import TransactionStatus


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


def motivo(error_message: str | None) -> str | None:
    """A failed refund's reason, cut to what the `motivo` field holds."""
    return error_message[:MOTIVO_MAX] if error_message else None
