"""Bodies of the API Pix's `/loc` (under its base path): PayloadLocationSolicitada, the
answers PayloadLocation(Completa) and PayloadLocationConsultadas, the `paginacao` every list
of the document shares, and the QR code of a location."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from pixgate.charges.queries.locations import Location
from pixgate.charges.rules.pages import Paging
from pixgate.core.http.schemas import ApiModel, example, iso

TipoCob = Literal["cob", "cobv"]


class PayloadLocationSolicitada(BaseModel):
    model_config = ConfigDict(json_schema_extra=example({"tipoCob": "cob"}))

    tipoCob: TipoCob


class PayloadLocationAnswer(ApiModel):
    """PayloadLocation, and PayloadLocationCompleta with the txid of the cob it serves."""

    id: int
    location: str
    tipo_cob: str
    criacao: str
    txid: str | None = None

    @classmethod
    def of(cls, found: Location, location_text: str) -> PayloadLocationAnswer:
        return cls(
            id=found.id,
            location=location_text,
            tipo_cob=found.tipo_cob,
            criacao=iso(found.created_at) or "",
            txid=found.txid,
        )


class Paginacao(ApiModel):
    pagina_atual: int
    itens_por_pagina: int
    quantidade_de_paginas: int
    quantidade_total_de_itens: int

    @classmethod
    def of(cls, paging: Paging) -> Paginacao:
        return cls(
            pagina_atual=paging.number,
            itens_por_pagina=paging.size,
            quantidade_de_paginas=paging.pages,
            quantidade_total_de_itens=paging.total,
        )


class ParametrosConsultaPayloadLocation(ApiModel):
    inicio: str
    fim: str
    tx_id_presente: bool | None = None
    tipo_cob: str | None = None
    paginacao: Paginacao


class PayloadLocationConsultadas(ApiModel):
    parametros: ParametrosConsultaPayloadLocation
    loc: list[PayloadLocationAnswer]


class LocationQrCode(ApiModel):
    """What PSPs answer for a location's QR code: the BR Code and its image (a PNG data URI)."""

    qrcode: str
    imagem_qrcode: str
