"""POST /sandbox/dict/keys (sandbox mode only): register a key in the simulated DICT."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from pixgate.accounts.public import Caller, Scope, granted, sandbox_only
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.schemas import DOCUMENT, EXAMPLE_CPF, ApiModel, example
from pixgate.sandbox import service as sandbox

router = APIRouter(
    route_class=PixgateRoute,
    tags=["sandbox"],
    dependencies=[Depends(sandbox_only)],
    responses={400: {"model": ApiError}, 401: {"model": ApiError}},
)


class DictKeyRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=example(
            {
                "key": "maria@example.com",
                "keyType": "EMAIL",
                "name": "Maria Souza",
                "document": EXAMPLE_CPF,
                "ispb": "60701190",
                "bankName": "ITAU UNIBANCO S.A.",
                "bankCode": "341",
                "branch": "0001",
                "accountNumber": "123456",
            }
        )
    )

    key: str = Field(min_length=1, max_length=77)
    keyType: Literal["CPF", "CNPJ", "EMAIL", "PHONE", "EVP", "RANDOM", "DOCUMENT"]
    name: str = Field(min_length=1, max_length=140)
    document: str = Field(
        min_length=11,
        max_length=18,
        json_schema_extra=DOCUMENT,
        description="CPF or CNPJ of the holder, with valid check digits",
    )
    ispb: str = Field(pattern=r"^\d{8}$")
    bankName: str = Field(min_length=1, max_length=140)
    bankCode: str = Field(default="000", pattern=r"^\d{3}$")
    branch: str = Field(min_length=1, max_length=10)
    accountNumber: str = Field(min_length=1, max_length=20)
    status: Literal["ACTIVE", "BLOCKED", "CLOSED"] = "ACTIVE"


class RegisteredKey(ApiModel):
    key: str
    key_type: str
    status: str


@router.post(
    "/sandbox/dict/keys",
    status_code=201,
    response_model=RegisteredKey,
    summary="Register a key in the sandbox DICT",
    responses={409: {"description": "The key is registered by another account."}},
)
async def register_key(
    body: DictKeyRequest, caller: Annotated[Caller, granted(Scope.PIX_WRITE)]
) -> RegisteredKey:
    holder = await sandbox.register_key(
        caller.rt,
        caller.account_id,
        key=body.key,
        key_type=body.keyType,
        name=body.name,
        document=body.document,
        ispb=body.ispb,
        bank_name=body.bankName,
        bank_code=body.bankCode,
        branch=body.branch,
        account_number=body.accountNumber,
        status=body.status,
    )
    return RegisteredKey(key=holder.key, key_type=holder.key_type, status=holder.status)
