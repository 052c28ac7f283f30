"""Bodies of PUT, GET and PATCH /cob/{txid}.

Requests modelled on the Central Bank's CobSolicitada and CobRevisada, the answer on its
Cob (members without a value are left out: the routes exclude nulls).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pixgate.charges.service.cob import Cob
from pixgate.core.http.schemas import EXAMPLE_CPF, ApiModel, CentralBankAmount, example, iso
from pixgate.core.labels import ChargeStatus
from pixgate.core.money import format_amount
from pixgate.core.pix.documents import is_valid_cnpj, is_valid_cpf


class Calendario(BaseModel):
    expiracao: int = Field(gt=0, le=2_147_483_647, description="seconds after creation")


class Devedor(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpf: str | None = Field(default=None, pattern=r"^\d{11}$")
    cnpj: str | None = Field(default=None, pattern=r"^[0-9A-Z]{12}\d{2}$")
    nome: str = Field(min_length=1, max_length=200)

    @model_validator(mode="after")
    def _one_valid_document(self) -> Devedor:
        if (self.cpf is None) == (self.cnpj is None):
            raise ValueError("devedor needs exactly one of cpf or cnpj")
        if self.cpf is not None and not is_valid_cpf(self.cpf):
            raise ValueError("devedor.cpf has invalid check digits")
        if self.cnpj is not None and not is_valid_cnpj(self.cnpj):
            raise ValueError("devedor.cnpj has invalid check digits")
        return self


class Valor(BaseModel):
    original: CentralBankAmount
    modalidadeAlteracao: Literal[0, 1] = 0


class InfoAdicional(BaseModel):
    nome: str = Field(min_length=1, max_length=50)
    valor: str = Field(min_length=1, max_length=200)


class CobRequest(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=example(
            {
                "calendario": {"expiracao": 3600},
                "devedor": {"cpf": EXAMPLE_CPF, "nome": "Maria Souza"},
                "valor": {"original": "123.45"},
                "chave": "loja@example.com",
                "solicitacaoPagador": "Pedido 42",
                "infoAdicionais": [{"nome": "Pedido", "valor": "42"}],
            }
        )
    )

    calendario: Calendario
    devedor: Devedor | None = None
    valor: Valor
    chave: str | None = Field(default=None, min_length=1, max_length=77)
    solicitacaoPagador: str | None = Field(default=None, max_length=140)
    infoAdicionais: list[InfoAdicional] | None = Field(default=None, max_length=50)


class CobPatch(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"valor": {"original": "99.90"}, "solicitacaoPagador": "Pedido 42, revisto"},
                {"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"},
            ]
        }
    )

    calendario: Calendario | None = None
    devedor: Devedor | None = None
    valor: Valor | None = None
    chave: str | None = Field(default=None, min_length=1, max_length=77)
    solicitacaoPagador: str | None = Field(default=None, max_length=140)
    infoAdicionais: list[InfoAdicional] | None = Field(default=None, max_length=50)
    status: Literal["REMOVIDA_PELO_USUARIO_RECEBEDOR"] | None = None


class CobCalendario(ApiModel):
    criacao: str
    expiracao: int = Field(description="seconds after creation")


class CobLoc(ApiModel):
    id: int
    location: str
    tipo_cob: Literal["cob"]


class CobValor(ApiModel):
    original: str
    modalidade_alteracao: int


class CobDevedor(ApiModel):
    cpf: str | None = None
    cnpj: str | None = None
    nome: str


class CobInfoAdicional(ApiModel):
    nome: str
    valor: str


class CobPix(ApiModel):
    end_to_end_id: str
    txid: str
    valor: str
    horario: str


class CobResponse(ApiModel):
    """2.9, plus `pixCopiaECola` for clients of the Central Bank's API, and `pix` once paid.
    `loc.id` is the cob's payload location (the API Pix's `/loc/{id}`); `loc` is left out
    once that location no longer serves the cob (`DELETE /loc/{id}/txid`)."""

    calendario: CobCalendario
    txid: str
    revisao: int
    loc: CobLoc | None = None
    location: str
    status: ChargeStatus
    valor: CobValor
    pix_copia_e_cola: str
    devedor: CobDevedor | None = None
    chave: str | None = None
    solicitacao_pagador: str | None = None
    info_adicionais: list[CobInfoAdicional] | None = None
    pix: list[CobPix] | None = None

    @classmethod
    def of(cls, found: Cob) -> CobResponse:
        charge = found.charge
        body: dict[str, Any] = charge.body
        code = charge.pix_code
        payment = found.payment
        paid = payment is not None and payment.status == "CONFIRMED"
        return cls(
            calendario=CobCalendario(
                criacao=iso(charge.created_at) or "",
                expiracao=int((charge.expires_at - charge.created_at).total_seconds()),
            ),
            txid=charge.txid,
            revisao=charge.revision,
            loc=None
            if found.location is None
            else CobLoc(id=found.location.id, location=code, tipo_cob="cob"),
            location=code,
            status=found.status,
            valor=CobValor(
                original=format_amount(charge.amount),
                modalidade_alteracao=body.get("modalidadeAlteracao", 0),
            ),
            pix_copia_e_cola=code,
            devedor=body.get("devedor"),
            chave=body.get("chave"),
            solicitacao_pagador=body.get("solicitacaoPagador"),
            info_adicionais=body.get("infoAdicionais"),
            pix=[
                CobPix(
                    end_to_end_id=payment.end_to_end_id or "",
                    txid=charge.txid,
                    valor=format_amount(payment.amount),
                    horario=iso(payment.processed_at) or "",
                )
            ]
            if paid and payment is not None
            else None,
        )
