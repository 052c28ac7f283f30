"""Bodies of PUT and PATCH /cob/{txid} (4.14).

Modelled on the Central Bank's CobSolicitada and CobRevisada.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pixgate.api.schemas.common import EXAMPLE_CPF, example
from pixgate.domain.documents import is_valid_cnpj, is_valid_cpf

AMOUNT = r"^\d{1,10}\.\d{2}$"


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
    original: str = Field(pattern=AMOUNT)
    modalidadeAlteracao: Literal[0, 1] = 0

    @field_validator("original")
    @classmethod
    def _positive(cls, value: str) -> str:
        if float(value) <= 0:
            raise ValueError("valor.original must be above 0.00")
        return value


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
