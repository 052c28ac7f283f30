"""The API Pix's payload locations under its base path: POST and GET /loc, GET /loc/{id},
DELETE /loc/{id}/txid, and GET /loc/{id}/qrcode (what PSPs offer beside the document: the
BR Code of the cob a location serves, and its image). Errors are the document's RFC 7807
problems (writes `PayloadLocationOperacaoInvalida`, reads `PayloadLocationConsultaInvalida`)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from fastapi import APIRouter, Query, Response

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.charges.queries.locations import Location
from pixgate.charges.routes.api_pix_lists import Pages, TimeWindow, window_echo
from pixgate.charges.routes.cash_in import qr_code_image
from pixgate.charges.schemas.api_pix_loc import (
    LocationQrCode,
    Paginacao,
    ParametrosConsultaPayloadLocation,
    PayloadLocationAnswer,
    PayloadLocationConsultadas,
    PayloadLocationSolicitada,
    TipoCob,
)
from pixgate.charges.service import locations
from pixgate.charges.service.locations import location_text
from pixgate.core.errors import NotFound
from pixgate.core.http import problems
from pixgate.core.http.errors import api_pix_route
from pixgate.core.settings import Settings

TAGS: list[str | Enum] = ["API Pix: loc"]
router = APIRouter(route_class=api_pix_route(problems.LOCATION_INVALIDA, "loc"), tags=TAGS)
query_router = APIRouter(
    route_class=api_pix_route(problems.LOCATION_CONSULTA_INVALIDA, "loc"), tags=TAGS
)
Writer = Annotated[Caller, granted(Scope.PAYLOADLOCATION_WRITE)]
Reader = Annotated[Caller, granted(Scope.PAYLOADLOCATION_READ)]


def answer(settings: Settings, found: Location) -> PayloadLocationAnswer:
    return PayloadLocationAnswer.of(found, location_text(settings, found.token))


def location_id(text: str) -> int:
    """The document types the path's id as a string: one that is not ours is not found."""
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise NotFound(f"location {text} not found")
    return int(text)


@router.post(
    "/loc",
    status_code=201,
    response_model=PayloadLocationAnswer,
    response_model_exclude_none=True,
    summary="Criar location do payload.",
    responses={201: {"headers": {"Location": {"schema": {"type": "string", "format": "uri"}}}}},
)
async def create_location(
    body: PayloadLocationSolicitada, caller: Writer, response: Response
) -> PayloadLocationAnswer:
    created = await locations.create(caller.rt, caller.account_id, body.tipoCob)
    base = caller.rt.settings.public_url.rstrip("/") + caller.rt.settings.api_pix_base_path
    response.headers["Location"] = f"{base}/loc/{created.id}"
    return answer(caller.rt.settings, created)


@query_router.get(
    "/loc",
    response_model=PayloadLocationConsultadas,
    response_model_exclude_none=True,
    summary="Consultar locations cadastradas.",
)
async def list_locations(
    caller: Reader,
    window: TimeWindow,
    pages: Pages,
    tx_id_presente: Annotated[bool | None, Query(alias="txIdPresente")] = None,
    tipo_cob: Annotated[TipoCob | None, Query(alias="tipoCob")] = None,
) -> PayloadLocationConsultadas:
    query = locations.LocationQuery(window, tx_id_presente, tipo_cob, pages)
    found = await locations.page(caller.rt, caller.account_id, query)
    inicio, fim = window_echo(window)
    return PayloadLocationConsultadas(
        parametros=ParametrosConsultaPayloadLocation(
            inicio=inicio,
            fim=fim,
            tx_id_presente=tx_id_presente,
            tipo_cob=tipo_cob,
            paginacao=Paginacao.of(found.paging),
        ),
        loc=[answer(caller.rt.settings, one) for one in found.locations],
    )


@query_router.get(
    "/loc/{id}",
    response_model=PayloadLocationAnswer,
    response_model_exclude_none=True,
    summary="Recuperar location do payload.",
)
async def read_location(id: str, caller: Reader) -> PayloadLocationAnswer:
    return answer(
        caller.rt.settings, await locations.get(caller.rt, caller.account_id, location_id(id))
    )


@router.delete(
    "/loc/{id}/txid",
    response_model=PayloadLocationAnswer,
    response_model_exclude_none=True,
    summary="Desvincular uma cobrança de uma location.",
)
async def unlink_location(id: str, caller: Writer) -> PayloadLocationAnswer:
    return answer(
        caller.rt.settings, await locations.unlink(caller.rt, caller.account_id, location_id(id))
    )


@query_router.get(
    "/loc/{id}/qrcode",
    response_model=LocationQrCode,
    summary="O QR Code da cobrança servida pela location.",
)
async def location_qr_code(id: str, caller: Reader) -> LocationQrCode:
    code = await locations.qr_code(caller.rt, caller.account_id, location_id(id))
    return LocationQrCode(qrcode=code, imagem_qrcode=qr_code_image(code))
