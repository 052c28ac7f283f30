"""Transaction list shapes (2.6)."""

from __future__ import annotations

from pydantic import BaseModel


class Bank(BaseModel):
    bankISPB: str | None
    bankName: str | None
    bankCode: str | None
    accountBranch: str | None
    accountNumber: str | None


class Counterpart(BaseModel):
    name: str | None
    document: str | None
    bank: Bank


class ListedTransaction(BaseModel):
    transactionId: str
    externalId: str | None
    status: str
    operationType: str
    movementType: str
    originalAmount: float
    feeAmount: float
    finalAmount: float
    endToEndId: str | None
    createdAt: str
    processedAt: str | None
    counterpart: Counterpart


class PageMetadata(BaseModel):
    page: int
    size: int
    total: int
    totalPages: int
    hasNext: bool
    hasPrevious: bool


class TransactionPage(BaseModel):
    data: list[ListedTransaction]
    metadata: PageMetadata
