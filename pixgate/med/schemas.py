"""MED cases on the wire: the items of GET /api/med and the sandbox's requests."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from pixgate.core.http.schemas import ApiModel, Money, example
from pixgate.med.rules import AnalysisResult, MedCause, MedReason, MedStatus

EXAMPLE_END_TO_END_ID = "E60701190202611221410Ab12345678c"


class MedBank(ApiModel):
    ispb: str
    name: str | None


class MedOriginalTransaction(ApiModel):
    amount: Money = Field(description="BRL")
    type: str = Field(examples=["PIX"])
    transaction_type: str = Field(examples=["CASH_IN"])
    name: str | None = Field(description="the payer")
    document: str | None = Field(description="the payer's document, masked")
    date_time: str | None = Field(description="when the PIX was received (ISO 8601)")


class MedItem(ApiModel):
    id: int
    end_to_end: str = Field(description="end-to-end id of the disputed PIX")
    status: MedStatus
    reason: MedReason
    cause: str | None = Field(description=f"one of {', '.join(MedCause)}, or null")
    description: str | None
    analysis_result: AnalysisResult | None = Field(description="null while under analysis")
    analysis_details: str | None
    requesting_bank: MedBank = Field(description="the payer's bank, which opened the case")
    contested_bank: MedBank = Field(description="this gateway's institution")
    original_transaction: MedOriginalTransaction | None
    is_reconciled: bool = Field(description="the disputed PIX is one this account received")
    original_transaction_id: int | None = Field(description="its local id when reconciled")
    blocked_amount: Money = Field(
        description="BRL held while the case was under analysis (up to the available balance)"
    )
    created_at: str
    updated_at: str


class MedMetadata(ApiModel):
    total: int
    page: int
    page_size: int
    total_pages: int


class MedPage(ApiModel):
    data: list[MedItem]
    metadata: MedMetadata


class SandboxMedRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {"endToEndId": EXAMPLE_END_TO_END_ID, "cause": "SOCIAL_ENGINEERING"}
        ),
    )

    end_to_end_id: str = Field(pattern=r"^[A-Za-z0-9]{32}$")
    reason: MedReason = MedReason.REFUND_REQUEST
    cause: str | None = Field(
        default=None, max_length=64, description=f"one of {', '.join(MedCause)}"
    )
    description: str | None = Field(default=None, max_length=2000)


class SandboxMedAnalysis(ApiModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=example({"result": "APPROVED"}))

    result: AnalysisResult
    details: str | None = Field(default=None, max_length=2000)
