"""Stored values of transactions (and an account's split frequency) and the labels the
transaction lists display.

The database keeps the stable English codes; the lists show the spec's labels. Keeping the
two apart lets a label change without a migration, and filters take the stored values.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class TransactionStatus(StrEnum):
    """`transactions.status`."""

    PENDING = "PENDING"
    CONFIRMED = "CONFIRMED"
    ERROR = "ERROR"


class OperationType(StrEnum):
    """`transactions.operation`: the direction and kind of money movement."""

    PAYMENT = "PAYMENT"
    WITHDRAW = "WITHDRAW"
    REFUND_IN = "REFUND_IN"
    REFUND_OUT = "REFUND_OUT"


class TransactionKind(StrEnum):
    """`transactions.kind`: the use case that wrote the row (its settlement hooks, its lists)."""

    CASH_OUT = "cash_out"
    CASH_OUT_QRCODE = "cash_out_qrcode"
    DICT_TRANSFER = "dict_transfer"
    SPLIT_PAYOUT = "split_payout"
    CASH_IN = "cash_in"
    COB = "cob"
    INCOMING = "incoming"


class ChargeStatus(StrEnum):
    """`charges.status`: each kind has its own vocabulary, cash_in English, cob the spec's."""

    PENDING = "PENDING"
    CONFIRMED = "CONFIRMED"
    EXPIRED = "EXPIRED"
    ATIVA = "ATIVA"
    CONCLUIDA = "CONCLUIDA"
    REMOVIDA_PELO_USUARIO_RECEBEDOR = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
    REMOVIDA_PELO_PSP = "REMOVIDA_PELO_PSP"


class SplitFrequency(StrEnum):
    """`accounts.split_frequency`: when the splits of the account's charges are paid out."""

    IMMEDIATE = "immediate"
    """In the transaction of the payment itself."""
    HOURLY = "hourly"
    """At the next hour boundary (the gateway's time zone)."""
    DAILY = "daily"
    """At the next midnight (the gateway's time zone)."""


STATUS_LABELS: Final[dict[str, str]] = {
    "PENDING": "Pendente",
    "CONFIRMED": "Confirmado",
    "ERROR": "Error",
}
"""Status as listed. `Error` is English in the spec, unlike the two others."""

OPERATION_LABELS: Final[dict[str, str]] = {
    "PAYMENT": "Pix in",
    "WITHDRAW": "Pix out",
    "REFUND_IN": "Refund in",
    "REFUND_OUT": "Refund out",
}
"""Operation type as listed."""

MOVEMENT_TYPES: Final[dict[str, str]] = {
    "PAYMENT": "CREDIT",
    "REFUND_OUT": "CREDIT",
    "WITHDRAW": "DEBIT",
    "REFUND_IN": "DEBIT",
}
"""Whether an operation adds to the account (a PIX received, a cash-out returned by its
receiver) or takes from it (a PIX sent, a received PIX refunded to its payer)."""
