"""MED (Mecanismo Especial de Devolução) cases: their states, causes and wire shape.

A case is opened by the payer's bank (the requesting bank) against a PIX this account
received. The gateway takes it in: the disputed amount, up to the available balance, is
blocked while the case is analysed. An approved case returns the blocked amount to the
payer as a refund whose `natureza` says why (fraud or an operational failure, by the case's
cause); a rejected or cancelled case releases the block.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pixgate.core.errors import ValidationFailed
from pixgate.core.masking import mask_document
from pixgate.core.money import to_decimal
from pixgate.core.timestamps import iso


class MedStatus(StrEnum):
    OPEN = "OPEN"
    """Opened by the requesting bank, not taken in: its PIX is not one this account received."""
    RECEIVED = "RECEIVED"
    """Taken in: the disputed amount (up to the available balance) is blocked."""
    CANCELLED = "CANCELLED"
    ANALYZED = "ANALYZED"


OPEN_STATUSES = frozenset({MedStatus.OPEN, MedStatus.RECEIVED})
"""A case in these states can still be analysed or cancelled; the others are final."""


class MedReason(StrEnum):
    REFUND_REQUEST = "REFUND_REQUEST"
    REFUND_CANCELLATION = "REFUND_CANCELLATION"


class AnalysisResult(StrEnum):
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


class RefundNature(StrEnum):
    """The `natureza` an approved case's refund is recorded with (the Central Bank's names)."""

    MED_FRAUDE = "MED_FRAUDE"
    MED_OPERACIONAL = "MED_OPERACIONAL"


class MedCause(StrEnum):
    """Why the payer's bank disputes the PIX. Every cause but one is a suspicion of fraud
    (refund `natureza` MED_FRAUDE, the pacs.004 reason FR01); `OPERATIONAL_FAILURE` is a
    failure of a participant's systems (MED_OPERACIONAL, reason BE08)."""

    UNAUTHORIZED_TRANSACTION = "UNAUTHORIZED_TRANSACTION"
    SOCIAL_ENGINEERING = "SOCIAL_ENGINEERING"
    SCAM = "SCAM"
    ACCOUNT_TAKEOVER = "ACCOUNT_TAKEOVER"
    COERCION = "COERCION"
    FRAUDULENT_ACCESS = "FRAUDULENT_ACCESS"
    OTHER_FRAUD = "OTHER_FRAUD"
    OPERATIONAL_FAILURE = "OPERATIONAL_FAILURE"


def refund_nature(cause: str | None) -> RefundNature:
    """A case without a cause is a fraud case: the MED exists for fraud, operational failures
    are the exception the requesting bank names."""
    if cause == MedCause.OPERATIONAL_FAILURE:
        return RefundNature.MED_OPERACIONAL
    return RefundNature.MED_FRAUDE


def parse_cause(cause: str | None) -> MedCause | None:
    if cause is None:
        return None
    try:
        return MedCause(cause.upper())
    except ValueError:
        allowed = ", ".join(MedCause)
        raise ValidationFailed([f"cause must be one of {allowed}; got {cause!r}"]) from None


def requesting_ispb(end_to_end_id: str) -> str:
    """The bank that sent the original PIX: its ISPB is part of every end-to-end id
    (`E` + 8-digit ISPB + ...), so a case names its requesting bank even unreconciled."""
    return end_to_end_id[1:9]


@dataclass(frozen=True, slots=True)
class Bank:
    ispb: str
    name: str | None


@dataclass(frozen=True, slots=True)
class OriginalTransaction:
    """The received PIX a reconciled case disputes, as the account saw it."""

    id: int
    amount: int
    payer_name: str | None
    payer_document: str | None
    received_at: datetime | None


@dataclass(frozen=True, slots=True)
class MedCase:
    id: int
    account_id: int
    end_to_end_id: str
    status: MedStatus
    reason: MedReason
    cause: str | None
    description: str | None
    analysis_result: AnalysisResult | None
    analysis_details: str | None
    requesting_bank: Bank
    contested_bank: Bank
    original: OriginalTransaction | None
    blocked_amount: int
    refund_transaction_id: int | None
    created_at: datetime
    updated_at: datetime

    @property
    def is_reconciled(self) -> bool:
        return self.original is not None


def wire(case: MedCase) -> dict[str, Any]:
    """The case as the API lists it and as MED webhooks carry it: one shape for both."""
    original = case.original
    return {
        "id": case.id,
        "endToEnd": case.end_to_end_id,
        "status": case.status.value,
        "reason": case.reason.value,
        "cause": case.cause,
        "description": case.description,
        "analysisResult": case.analysis_result.value if case.analysis_result else None,
        "analysisDetails": case.analysis_details,
        "requestingBank": {"ispb": case.requesting_bank.ispb, "name": case.requesting_bank.name},
        "contestedBank": {"ispb": case.contested_bank.ispb, "name": case.contested_bank.name},
        "originalTransaction": None
        if original is None
        else {
            "amount": to_decimal(original.amount),
            "type": "PIX",
            "transactionType": "CASH_IN",
            "name": original.payer_name,
            "document": mask_document(original.payer_document),
            "dateTime": iso(original.received_at) if original.received_at else None,
        },
        "isReconciled": case.is_reconciled,
        "originalTransactionId": original.id if original else None,
        "blockedAmount": to_decimal(case.blocked_amount),
        "createdAt": iso(case.created_at),
        "updatedAt": iso(case.updated_at),
    }
