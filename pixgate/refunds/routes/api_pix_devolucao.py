"""PUT and GET /pix/{e2eid}/devolucao/{id} of the Central Bank's API Pix (under its base
path): the same refunds as the root-level routes (`devolucao`), answered as the document's
`Devolucao`, errors as RFC 7807 problems: `PixDevolucaoInvalida` (400) for a body that breaks
the schema, an amount above what is left to refund, a closed refund window, a short balance
or an id already used otherwise; `NaoEncontrado` (404) for a PIX the account did not receive
or a refund it does not have. PUT needs the scope pix.write, GET pix.read.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from pixgate.core.http import problems
from pixgate.core.http.errors import Family, api_pix_route, openapi_responses
from pixgate.refunds.routes import devolucao
from pixgate.refunds.routes.devolucao import EndToEndId, Reader, RefundId, ScenarioWriter
from pixgate.refunds.schemas import DevolucaoRequest, DevolucaoResponse

router = APIRouter(
    route_class=api_pix_route(problems.DEVOLUCAO_INVALIDA, "devolucao"),
    tags=["API Pix: Pix"],
)


@router.put(
    "/pix/{e2eid}/devolucao/{id}",
    status_code=201,
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Request a refund of a received PIX",
    responses=openapi_responses(*devolucao.PUT_ERRORS, family=Family.API_PIX),
)
async def request_devolucao(
    e2eid: EndToEndId,
    refund_id: RefundId,
    body: DevolucaoRequest,
    response: Response,
    caller: ScenarioWriter,
) -> DevolucaoResponse:
    return await devolucao.request(caller, e2eid, refund_id, body, response)


@router.get(
    "/pix/{e2eid}/devolucao/{id}",
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Read a refund of a received PIX",
    responses=openapi_responses(*devolucao.GET_ERRORS, family=Family.API_PIX),
)
async def read_devolucao(
    e2eid: EndToEndId, refund_id: RefundId, caller: Reader
) -> DevolucaoResponse:
    return await devolucao.read(caller, e2eid, refund_id)
