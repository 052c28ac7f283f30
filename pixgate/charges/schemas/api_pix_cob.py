"""Bodies of the API Pix's `/cob` (under its base path): CobSolicitada, CobRevisada, and the
answers CobGerada, CobCompleta and CobsConsultadas, as the document names their members."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pixgate.charges.schemas.api_pix_loc import Paginacao, PayloadLocationAnswer
from pixgate.charges.schemas.cob import (
    CobCalendario,
    CobDevedor,
    CobInfoAdicional,
    CobValor,
    Devedor,
    InfoAdicional,
    Valor,
)
from pixgate.charges.service.cob import Cob, CobInput
from pixgate.core.http.schemas import EXAMPLE_CPF, ApiModel, CentralBankAmount, example, iso
from pixgate.core.labels import ChargeStatus
from pixgate.core.money import format_amount

DEFAULT_EXPIRATION = 86400
"""`calendario.expiracao` when a request leaves it out: the document's default, one day."""


class Calendario(BaseModel):
    expiracao: int = Field(
        default=DEFAULT_EXPIRATION, gt=0, le=2_147_483_647, description="seconds after creation"
    )


class LocRequest(BaseModel):
    """`loc`: a free location of the account, of tipoCob `cob`, that will serve the cob."""

    id: int = Field(ge=1)


class ValorSolicitado(Valor):
    """No `retirada`: a cob here is a plain charge (Pix Saque and Pix Troco are not offered),
    so one asking for it is refused rather than made without it."""

    model_config = ConfigDict(extra="forbid")


class CobSolicitada(BaseModel):
    model_config = ConfigDict(
        json_schema_extra=example(
            {
                "calendario": {"expiracao": 3600},
                "devedor": {"cpf": EXAMPLE_CPF, "nome": "Maria Souza"},
                "valor": {"original": "123.45"},
                "chave": "7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
                "solicitacaoPagador": "Pedido 42",
            }
        )
    )

    calendario: Calendario
    devedor: Devedor | None = None
    loc: LocRequest | None = None
    valor: ValorSolicitado
    chave: str = Field(min_length=1, max_length=77)
    solicitacaoPagador: str | None = Field(default=None, max_length=140)
    infoAdicionais: list[InfoAdicional] | None = Field(default=None, max_length=50)

    def as_input(self) -> CobInput:
        return CobInput(
            expiracao=self.calendario.expiracao,
            devedor=_devedor(self.devedor),
            original=self.valor.original,
            modalidade_alteracao=self.valor.modalidadeAlteracao,
            chave=self.chave,
            solicitacao_pagador=self.solicitacaoPagador,
            info_adicionais=_infos(self.infoAdicionais),
            loc_id=self.loc.id if self.loc else None,
        )


class ValorRevisado(BaseModel):
    model_config = ConfigDict(extra="forbid")

    original: CentralBankAmount | None = None
    modalidadeAlteracao: Literal[0, 1] | None = None


class CobRevisada(BaseModel):
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
    loc: LocRequest | None = None
    valor: ValorRevisado | None = None
    chave: str | None = Field(default=None, min_length=1, max_length=77)
    solicitacaoPagador: str | None = Field(default=None, max_length=140)
    infoAdicionais: list[InfoAdicional] | None = Field(default=None, max_length=50)
    status: Literal["REMOVIDA_PELO_USUARIO_RECEBEDOR"] | None = None

    @model_validator(mode="after")
    def _removal_alone(self) -> CobRevisada:
        """The document: removing a cob while editing it makes no sense, so it is refused."""
        changes = self.model_fields_set - {"status"}
        if self.status is not None and changes:
            raise ValueError(
                "a removal (status) cannot change other fields: " + ", ".join(sorted(changes))
            )
        return self

    def as_input(self) -> CobInput:
        return CobInput(
            expiracao=self.calendario.expiracao if self.calendario else None,
            devedor=_devedor(self.devedor),
            original=self.valor.original if self.valor else None,
            modalidade_alteracao=self.valor.modalidadeAlteracao if self.valor else None,
            chave=self.chave,
            solicitacao_pagador=self.solicitacaoPagador,
            info_adicionais=_infos(self.infoAdicionais),
            loc_id=self.loc.id if self.loc else None,
        )


def _devedor(devedor: Devedor | None) -> dict[str, str] | None:
    return devedor.model_dump(exclude_none=True) if devedor else None


def _infos(infos: list[InfoAdicional] | None) -> list[dict[str, str]] | None:
    return None if infos is None else [i.model_dump() for i in infos]


class CobPix(ApiModel):
    end_to_end_id: str
    txid: str
    valor: str
    chave: str
    horario: str


class CobAnswer(ApiModel):
    """CobGerada, and CobCompleta (with `pix` once paid). `loc`, `location` and the
    copy-and-paste code are left out once the cob's location no longer serves it; a past
    revision has no code either (only the current one is served)."""

    calendario: CobCalendario
    txid: str
    revisao: int
    loc: PayloadLocationAnswer | None = None
    location: str | None = None
    status: ChargeStatus
    devedor: CobDevedor | None = None
    valor: CobValor
    chave: str
    solicitacao_pagador: str | None = None
    info_adicionais: list[CobInfoAdicional] | None = None
    pix_copia_e_cola: str | None = None
    pix: list[CobPix] | None = None

    @classmethod
    def of(cls, found: Cob, location_text: str | None, **extra: Any) -> Self:
        """`location_text`: the location's URL without scheme, None once unlinked."""
        charge = found.charge
        body: dict[str, Any] = charge.body
        served = found.location is not None and location_text is not None
        return cls(
            calendario=CobCalendario(
                criacao=iso(charge.created_at) or "",
                expiracao=int((charge.expires_at - charge.created_at).total_seconds()),
            ),
            txid=charge.txid,
            revisao=charge.revision,
            loc=PayloadLocationAnswer.of(found.location, location_text)
            if found.location is not None and location_text is not None
            else None,
            location=location_text if served else None,
            status=found.status,
            devedor=body.get("devedor"),
            valor=CobValor(
                original=format_amount(charge.amount),
                modalidade_alteracao=body.get("modalidadeAlteracao", 0),
            ),
            chave=found.key,
            solicitacao_pagador=body.get("solicitacaoPagador"),
            info_adicionais=body.get("infoAdicionais"),
            pix_copia_e_cola=charge.pix_code if served and found.current else None,
            pix=_pix(found),
            **extra,
        )


def _pix(found: Cob) -> list[CobPix] | None:
    payment = found.payment
    if payment is None or payment.status != "CONFIRMED":
        return None
    return [
        CobPix(
            end_to_end_id=payment.end_to_end_id or "",
            txid=found.charge.txid,
            valor=format_amount(payment.amount),
            chave=found.key,
            horario=iso(payment.processed_at) or "",
        )
    ]


class ParametrosConsultaCob(ApiModel):
    inicio: str
    fim: str
    cpf: str | None = None
    cnpj: str | None = None
    location_presente: bool | None = None
    status: str | None = None
    paginacao: Paginacao


class CobListed(CobAnswer):
    id_cob: int = Field(description="the cob's identifier at this PSP")


class CobsConsultadas(ApiModel):
    parametros: ParametrosConsultaCob
    cobs: list[CobListed]
