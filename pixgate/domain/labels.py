"""Stored values and the display labels of the transaction lists (2.6)."""

from __future__ import annotations

from enum import StrEnum


class TransactionStatus(StrEnum):
    PENDING = "PENDING"
    CONFIRMED = "CONFIRMED"
    ERROR = "ERROR"


class OperationType(StrEnum):
    PAYMENT = "PAYMENT"
    WITHDRAW = "WITHDRAW"
    REFUND_IN = "REFUND_IN"
    REFUND_OUT = "REFUND_OUT"


STATUS_LABELS = {"PENDING": "Pendente", "CONFIRMED": "Confirmado", "ERROR": "Error"}
OPERATION_LABELS = {
    "PAYMENT": "Pix in",
    "WITHDRAW": "Pix out",
    "REFUND_IN": "Refund in",
    "REFUND_OUT": "Refund out",
}
MOVEMENT_TYPES = {
    "PAYMENT": "CREDIT",
    "REFUND_OUT": "CREDIT",
    "WITHDRAW": "DEBIT",
    "REFUND_IN": "DEBIT",
}
