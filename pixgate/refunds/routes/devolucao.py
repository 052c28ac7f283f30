"""PUT and GET /pix/{e2eid}/devolucao/{id}: the Central-Bank-style refund.

PUT answers 201, GET 200; errors in the simple body. A repeated PUT (same e2eid and id,
same body) answers 201 with the refund the first one made, as it is now, and the header
`Idempotent-Replayed: true`. PUT needs the scope pix.write, GET pix.read.

`request` and `read` are also the API Pix's (`api_pix_devolucao`), which differs only in
its error family: one refund, made through either, is read through both.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core import errors
from pixgate.core.http.errors import CentralBankRoute, Family, openapi_responses
from pixgate.refunds import service as refunds
from pixgate.refunds.rules import END_TO_END_PATTERN, REFUND_ID_PATTERN, Natureza, devolucao_body
from pixgate.refunds.schemas import DevolucaoRequest, DevolucaoResponse

router = APIRouter(route_class=CentralBankRoute, tags=["refunds"])

EndToEndId = Annotated[
    str, Path(pattern=END_TO_END_PATTERN, description="end-to-end id of the PIX received")
]
RefundId = Annotated[
    str,
    Path(
        alias="id",
        pattern=REFUND_ID_PATTERN,
        description="the client's id of this refund (the refund's externalId)",
    ),
]
ScenarioWriter = Annotated[Caller, granted(Scope.PIX_WRITE, scenario=True)]
Reader = Annotated[Caller, granted(Scope.PIX_READ)]

PUT_ERRORS = (
    errors.ValidationFailed,
    errors.RefundAmountExceeded,
    errors.RefundIdReused,
    errors.NotFound,
    errors.DevolucaoDeadlineExceeded,
    errors.DevolucaoInsufficientBalance,
    errors.ProviderUnavailable,
)
GET_ERRORS = (errors.ValidationFailed, errors.NotFound)


async def request(
    caller: Caller, e2eid: str, refund_id: str, body: DevolucaoRequest, response: Response
) -> DevolucaoResponse:
    """The refund `refund_id` of the PIX `e2eid`, made now or by an earlier same request."""
    order = refunds.RefundOrder(
        amount=refunds.amount_of(body.valor, "valor"),
        external_id=refund_id,
        description=body.descricao,
        natureza=Natureza(body.natureza),
    )
    made = await refunds.devolucao(
        caller.rt, caller.account_id, e2eid, order, instructions=caller.instructions
    )
    if made.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return shape(made.refund)


async def read(caller: Caller, e2eid: str, refund_id: str) -> DevolucaoResponse:
    return shape(await refunds.get_devolucao(caller.rt, caller.account_id, e2eid, refund_id))


@router.put(
    "/pix/{e2eid}/devolucao/{id}",
    status_code=201,
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Request a refund of a received PIX (Central-Bank style)",
    responses=openapi_responses(*PUT_ERRORS, family=Family.CENTRAL_BANK),
)
async def request_devolucao(
    e2eid: EndToEndId,
    refund_id: RefundId,
    body: DevolucaoRequest,
    response: Response,
    caller: ScenarioWriter,
) -> DevolucaoResponse:
    return await request(caller, e2eid, refund_id, body, response)


@router.get(
    "/pix/{e2eid}/devolucao/{id}",
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Read a refund of a received PIX (Central-Bank style)",
    responses=openapi_responses(*GET_ERRORS, family=Family.CENTRAL_BANK),
)
async def read_devolucao(
    e2eid: EndToEndId, refund_id: RefundId, caller: Reader
) -> DevolucaoResponse:
    return await read(caller, e2eid, refund_id)


def shape(refund: refunds.Refund) -> DevolucaoResponse:
    return DevolucaoResponse.model_validate(devolucao_body(refund.devolucao()))
