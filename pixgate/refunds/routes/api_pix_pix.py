"""GET /pix and GET /pix/{e2eid} of the Central Bank's API Pix (under its base path): the
PIX the caller's account received, each with its refunds (`devolucoes`).

A received PIX is a CONFIRMED payment into the account: a cob or cash-in charge paid, a PIX
received without a charge, or one paid by another of our accounts to a key of this one.
Errors are RFC 7807 problems (`PixConsultaInvalida` for a query that breaks the schema or
makes no sense, `NaoEncontrado` for an end-to-end id the account did not receive).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core import errors
from pixgate.core.http import problems
from pixgate.core.http.errors import Family, api_pix_route, openapi_responses
from pixgate.core.http.intake.params import Fim, Inicio, ItensPorPagina, PaginaAtual
from pixgate.core.http.schemas import Paginacao
from pixgate.core.timestamps import iso
from pixgate.refunds import service as refunds
from pixgate.refunds.rules import END_TO_END_PATTERN, PixQuery, ReceivedPix, pix_body
from pixgate.refunds.schemas import ParametrosConsultaPix, Pix, PixConsultados

router = APIRouter(
    route_class=api_pix_route(problems.PIX_CONSULTA_INVALIDA, ""), tags=["API Pix: Pix"]
)

Reader = Annotated[Caller, granted(Scope.PIX_READ)]
EndToEndId = Annotated[
    str, Path(pattern=END_TO_END_PATTERN, description="end-to-end id of the PIX received")
]
TXID_PATTERN = r"^[a-zA-Z0-9]{1,35}$"


def pix(received: ReceivedPix) -> Pix:
    return Pix.model_validate(pix_body(received))


@router.get(
    "/pix",
    response_model=PixConsultados,
    response_model_exclude_none=True,
    summary="List the PIX received in a period",
    responses=openapi_responses(errors.ValidationFailed, family=Family.API_PIX),
)
async def list_pix(
    caller: Reader,
    inicio: Inicio,
    fim: Fim,
    txid: Annotated[str | None, Query(pattern=TXID_PATTERN)] = None,
    tx_id_presente: Annotated[bool | None, Query(alias="txIdPresente")] = None,
    devolucao_presente: Annotated[bool | None, Query(alias="devolucaoPresente")] = None,
    cpf: Annotated[str | None, Query(pattern=r"^[0-9]{11}$", description="the payer's")] = None,
    cnpj: Annotated[
        str | None, Query(pattern=r"^[0-9A-Z]{14}$", description="the payer's; not with cpf")
    ] = None,
    pagina_atual: PaginaAtual = 0,
    itens_por_pagina: ItensPorPagina = 100,
) -> PixConsultados:
    query = PixQuery(
        start=inicio,
        end=fim,
        txid=txid,
        txid_present=tx_id_presente,
        refund_present=devolucao_presente,
        cpf=cpf,
        cnpj=cnpj,
        page=pagina_atual,
        per_page=itens_por_pagina,
    )
    page = await refunds.received_list(caller.rt, caller.account_id, query)
    return PixConsultados(
        parametros=ParametrosConsultaPix(
            inicio=iso(inicio) or "",
            fim=iso(fim) or "",
            txid=txid,
            tx_id_presente=tx_id_presente,
            devolucao_presente=devolucao_presente,
            cpf=cpf,
            cnpj=cnpj,
            paginacao=Paginacao.of(pagina_atual, itens_por_pagina, page.total),
        ),
        pix=[pix(received) for received in page.items],
    )


@router.get(
    "/pix/{e2eid}",
    response_model=Pix,
    response_model_exclude_none=True,
    summary="Read a PIX received",
    responses=openapi_responses(errors.ValidationFailed, errors.NotFound, family=Family.API_PIX),
)
async def read_pix(e2eid: EndToEndId, caller: Reader) -> Pix:
    return pix(await refunds.received(caller.rt, caller.account_id, e2eid))
