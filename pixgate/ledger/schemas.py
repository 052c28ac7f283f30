"""Transaction list shapes: GET /api/transactions and GET /api/pix/transactions/pix-key.

`ListedTransaction.values_of` is the one shaping of a stored transaction for HTTP answers
(and the dashboard's tables), with the labels and masking of `core/`. The list is a hot
route: `TransactionPage.of` validates the whole page once, by field name (`BuiltModel`).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from pixgate.core.http.schemas import BuiltModel, Money, iso
from pixgate.core.labels import MOVEMENT_TYPES, OPERATION_LABELS, STATUS_LABELS
from pixgate.core.masking import mask_document
from pixgate.core.money import to_decimal
from pixgate.ledger.queries.transactions import Transaction
from pixgate.ledger.service.transactions import Page


class Bank(BuiltModel):
    bank_ispb: str | None = Field(alias="bankISPB")
    bank_name: str | None
    bank_code: str | None
    account_branch: str | None
    account_number: str | None


class Counterpart(BuiltModel):
    name: str | None
    document: str | None
    bank: Bank


class ListedTransaction(BuiltModel):
    transaction_id: str
    external_id: str | None
    status: str
    operation_type: str
    movement_type: str
    original_amount: Money
    fee_amount: Money
    final_amount: Money
    end_to_end_id: str | None
    created_at: str
    processed_at: str | None
    counterpart: Counterpart

    @staticmethod
    def values_of(row: Transaction) -> dict[str, Any]:
        """A stored transaction as 2.6 shows it: labels, 2-decimal amounts, masked
        counterpart; keyed by field name."""
        operation = row.operation
        movement = MOVEMENT_TYPES[operation]
        amount, fee = row.amount, row.fee
        counterpart: dict[str, Any] = row.counterpart or {}
        bank: dict[str, Any] = counterpart.get("bank") or {}
        return {
            "transaction_id": str(row.transaction_id),
            "external_id": row.external_id,
            "status": STATUS_LABELS[row.status],
            "operation_type": OPERATION_LABELS[operation],
            "movement_type": movement,
            "original_amount": to_decimal(amount),
            "fee_amount": to_decimal(fee),
            "final_amount": to_decimal(amount - fee if movement == "CREDIT" else amount + fee),
            "end_to_end_id": row.end_to_end_id,
            "created_at": iso(row.created_at),
            "processed_at": iso(row.processed_at),
            "counterpart": {
                "name": counterpart.get("name"),
                "document": mask_document(counterpart.get("document")),
                "bank": {
                    "bank_ispb": bank.get("bankISPB"),
                    "bank_name": bank.get("bankName"),
                    "bank_code": bank.get("bankCode"),
                    "account_branch": bank.get("accountBranch"),
                    "account_number": bank.get("accountNumber"),
                },
            },
        }


class PageMetadata(BuiltModel):
    page: int
    size: int
    total: int
    total_pages: int
    has_next: bool
    has_previous: bool

    @staticmethod
    def values_of(page: int, size: int, total: int, *, more: bool) -> dict[str, Any]:
        """`more`: a row exists past this page."""
        return {
            "page": page,
            "size": size,
            "total": total,
            "total_pages": math.ceil(total / size) if total else 0,
            "has_next": more,
            "has_previous": page > 1,
        }


class TransactionPage(BuiltModel):
    data: list[ListedTransaction]
    metadata: PageMetadata

    @classmethod
    def of(cls, found: Page) -> TransactionPage:
        return cls.model_validate(
            {
                "data": [ListedTransaction.values_of(row) for row in found.rows],
                "metadata": PageMetadata.values_of(
                    found.page, found.size, found.total, more=found.more
                ),
            }
        )
