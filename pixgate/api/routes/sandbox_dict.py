"""POST /sandbox/dict/keys (D24): register a key in the simulated DICT."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from pixgate.api.deps import CurrentAccount, RuntimeDep, sandbox_only
from pixgate.api.schemas.errors import ApiError
from pixgate.services import sandbox

router = APIRouter(
    tags=["sandbox"],
    dependencies=[Depends(sandbox_only)],
    responses={400: {"model": ApiError}, 401: {"model": ApiError}},
)


class DictKeyRequest(BaseModel):
    key: str = Field(min_length=1, max_length=77)
    keyType: Literal["CPF", "CNPJ", "EMAIL", "PHONE", "EVP", "RANDOM", "DOCUMENT"]
    name: str = Field(min_length=1, max_length=140)
    document: str = Field(min_length=11, max_length=18)
    ispb: str = Field(pattern=r"^\d{8}$")
    bankName: str = Field(min_length=1, max_length=140)
    bankCode: str = Field(default="000", pattern=r"^\d{3}$")
    branch: str = Field(min_length=1, max_length=10)
    accountNumber: str = Field(min_length=1, max_length=20)
    status: Literal["ACTIVE", "BLOCKED", "CLOSED"] = "ACTIVE"


@router.post("/sandbox/dict/keys", status_code=201, summary="Register a key in the sandbox DICT")
async def register_key(
    body: DictKeyRequest, rt: RuntimeDep, who: CurrentAccount
) -> dict[str, str]:
    holder = await sandbox.register_key(
        rt, who.account_id,
        key=body.key, key_type=body.keyType, name=body.name, document=body.document,
        ispb=body.ispb, bank_name=body.bankName, bank_code=body.bankCode, branch=body.branch,
        account_number=body.accountNumber, status=body.status,
    )
    return {"key": holder.key, "keyType": holder.key_type, "status": holder.status}
