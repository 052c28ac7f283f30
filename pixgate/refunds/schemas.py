"""Bodies of the refund routes: POST /api/pix/refund-in/{id}, PUT and GET
/pix/{e2eid}/devolucao/{id} (modelled on the Central Bank's DevolucaoSolicitada
and Devolucao) and POST /sandbox/pix/{transactionId}/refund-out."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import (
    Amount,
    ApiModel,
    CentralBankAmount,
    Money,
    Paginacao,
    example,
)
from pixgate.refunds.rules import (
    END_TO_END_PATTERN,
    REFUND_ID_PATTERN,
    DevolucaoStatus,
    Natureza,
)

MAX_DESCRIPTION = 140
"""What the pacs.004's RemittanceInformation holds."""


class RefundInRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=example(
            {"refundValue": 10.5, "reason": "Produto devolvido", "externalId": "refund981a"}
        ),
    )

    refundValue: Amount
    reason: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    externalId: str | None = Field(
        default=None,
        pattern=REFUND_ID_PATTERN,
        description="1 to 35 letters and digits; the `id` of the same refund in "
        "GET /pix/{e2eid}/devolucao/{id}. Absent: one is generated.",
    )


class RefundInResponse(ApiModel):
    """2.4: the refund as accepted (PENDING); its result arrives by webhook."""

    transaction_id: str
    external_id: str
    status: Literal["PENDING", "CONFIRMED", "ERROR"]
    refund_value: Money
    provider_transaction_id: str = Field(
        description="UUID at the provider; the refund's webhooks carry it in "
        "`metadata.providerTransactionId`"
    )
    generate_time: str


class DevolucaoRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=example(
            {"valor": "7.89", "natureza": "ORIGINAL", "descricao": "Devolucao do pedido 981"}
        ),
    )

    valor: CentralBankAmount
    natureza: Literal["ORIGINAL", "RETIRADA"] = Field(
        default="ORIGINAL",
        description="MED_OPERACIONAL and MED_FRAUDE are only answered, never accepted",
    )
    descricao: str | None = Field(default=None, max_length=MAX_DESCRIPTION)


class Horario(ApiModel):
    solicitacao: str
    liquidacao: str | None = Field(default=None, description="once DEVOLVIDO")


class DevolucaoResponse(ApiModel):
    """2.10; members without a value are left out."""

    id: str
    rtr_id: str = Field(min_length=32, max_length=32)
    valor: str
    natureza: Natureza
    descricao: str | None = None
    horario: Horario
    status: DevolucaoStatus
    motivo: str | None = Field(default=None, max_length=140)


class Pix(ApiModel):
    """The Central Bank's `Pix`: a PIX the account received; members without a value, and
    `devolucoes` when there is none, are left out."""

    end_to_end_id: str = Field(pattern=END_TO_END_PATTERN)
    txid: str | None = None
    valor: str
    chave: str | None = Field(default=None, max_length=77)
    horario: str
    info_pagador: str | None = Field(default=None, max_length=140)
    devolucoes: list[DevolucaoResponse] | None = None


class ParametrosConsultaPix(ApiModel):
    """The query as understood, echoed, with the page's totals."""

    inicio: str
    fim: str
    txid: str | None = None
    tx_id_presente: bool | None = None
    devolucao_presente: bool | None = None
    cpf: str | None = None
    cnpj: str | None = None
    paginacao: Paginacao


class PixConsultados(ApiModel):
    parametros: ParametrosConsultaPix
    pix: list[Pix]


class RefundOutRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=example({"value": 5}))

    value: Amount


class RefundOutResponse(ApiModel):
    """The REFUND_OUT credited (CONFIRMED at once)."""

    transaction_id: str
    end_to_end_id: str
    status: Literal["CONFIRMED"]
    value: Money
    generate_time: str
