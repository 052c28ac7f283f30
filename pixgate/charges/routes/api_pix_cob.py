"""The API Pix's immediate charges under its base path: PUT, PATCH and GET /cob/{txid},
POST /cob and GET /cob, answered as the document's CobGerada, CobCompleta and
CobsConsultadas, errors as its RFC 7807 problems (writes `CobOperacaoInvalida`, reads
`CobConsultaInvalida`). The same cobs as the root-level `/cob/{txid}`."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.charges.routes.api_pix_lists import Pages, TimeWindow, window_echo
from pixgate.charges.schemas.api_pix_cob import (
    CobAnswer,
    CobListed,
    CobRevisada,
    CobsConsultadas,
    CobSolicitada,
    ParametrosConsultaCob,
)
from pixgate.charges.schemas.api_pix_loc import Paginacao
from pixgate.charges.service import cob, cob_pages
from pixgate.charges.service.cob import Cob
from pixgate.charges.service.locations import location_text
from pixgate.core.http import problems
from pixgate.core.http.errors import api_pix_route
from pixgate.core.settings import Settings

router = APIRouter(route_class=api_pix_route(problems.COB_INVALIDA, "cob"), tags=["API Pix: cob"])
query_router = APIRouter(
    route_class=api_pix_route(problems.COB_CONSULTA_INVALIDA, "cob"), tags=["API Pix: cob"]
)
Txid = Annotated[str, Path(pattern=r"^[a-zA-Z0-9]{26,35}$")]
Writer = Annotated[Caller, granted(Scope.COB_WRITE)]
ScenarioWriter = Annotated[Caller, granted(Scope.COB_WRITE, scenario=True)]
Reader = Annotated[Caller, granted(Scope.COB_READ)]
CobStatus = Literal["ATIVA", "CONCLUIDA", "REMOVIDA_PELO_USUARIO_RECEBEDOR", "REMOVIDA_PELO_PSP"]


def answer(settings: Settings, found: Cob) -> CobAnswer:
    return CobAnswer.of(found, _where(settings, found))


def _where(settings: Settings, found: Cob) -> str | None:
    return None if found.location is None else location_text(settings, found.location.token)


@router.put(
    "/cob/{txid}",
    status_code=201,
    response_model=CobAnswer,
    response_model_exclude_none=True,
    summary="Criar cobrança imediata.",
)
async def create_cob(
    txid: Txid,
    body: CobSolicitada,
    caller: ScenarioWriter,
) -> CobAnswer:
    created = await cob.create(
        caller.rt,
        caller.account_id,
        txid,
        body.as_input(),
        instructions=caller.instructions,
        own_key=True,
    )
    return answer(caller.rt.settings, created)


@router.post(
    "/cob",
    status_code=201,
    response_model=CobAnswer,
    summary="Criar cobrança imediata, com o txid definido pelo PSP.",
    response_model_exclude_none=True,
)
async def create_cob_with_our_txid(body: CobSolicitada, caller: ScenarioWriter) -> CobAnswer:
    created = await cob.create_with_txid_of_ours(
        caller.rt,
        caller.account_id,
        body.as_input(),
        instructions=caller.instructions,
        own_key=True,
    )
    return answer(caller.rt.settings, created)


@router.patch(
    "/cob/{txid}",
    response_model=CobAnswer,
    response_model_exclude_none=True,
    summary="Revisar cobrança imediata.",
)
async def revise_cob(txid: Txid, body: CobRevisada, caller: Writer) -> CobAnswer:
    revised = await cob.revise(
        caller.rt,
        caller.account_id,
        txid,
        body.as_input(),
        cancel=body.status is not None,
        own_key=True,
    )
    return answer(caller.rt.settings, revised)


@query_router.get(
    "/cob/{txid}",
    response_model=CobAnswer,
    response_model_exclude_none=True,
    summary="Consultar cobrança imediata.",
)
async def read_cob(
    txid: str,
    caller: Reader,
    revisao: Annotated[int | None, Query(ge=0, le=2_147_483_647)] = None,
) -> CobAnswer:
    return answer(caller.rt.settings, await cob.get(caller.rt, caller.account_id, txid, revisao))


@query_router.get(
    "/cob",
    response_model=CobsConsultadas,
    response_model_exclude_none=True,
    summary="Consultar lista de cobranças imediatas.",
)
async def list_cobs(
    caller: Reader,
    window: TimeWindow,
    pages: Pages,
    cpf: Annotated[str | None, Query(pattern=r"^\d{11}$")] = None,
    cnpj: Annotated[str | None, Query(pattern=r"^[0-9A-Z]{12}\d{2}$")] = None,
    location_presente: Annotated[bool | None, Query(alias="locationPresente")] = None,
    status: CobStatus | None = None,
) -> CobsConsultadas:
    query = cob_pages.CobQuery(window, cpf, cnpj, location_presente, status, pages)
    found = await cob_pages.page(caller.rt, caller.account_id, query)
    inicio, fim = window_echo(window)
    return CobsConsultadas(
        parametros=ParametrosConsultaCob(
            inicio=inicio,
            fim=fim,
            cpf=cpf,
            cnpj=cnpj,
            location_presente=location_presente,
            status=status,
            paginacao=Paginacao.of(found.paging),
        ),
        cobs=[
            CobListed.of(listed, _where(caller.rt.settings, listed), id_cob=listed.charge.id)
            for listed in found.cobs
        ],
    )
