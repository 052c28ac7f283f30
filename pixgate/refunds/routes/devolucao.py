"""PUT and GET /pix/{e2eid}/devolucao/{id}: the Central-Bank-style refund.

PUT answers 201, GET 200; errors in the simple body. A repeated PUT (same e2eid and id,
same body) answers 201 with the refund the first one made, as it is now, and the header
`Idempotent-Replayed: true`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from pixgate.accounts.public import CurrentAccount, ProviderInstructions, RuntimeDep
from pixgate.core import errors
from pixgate.core.http.errors import CentralBankRoute, Family, openapi_responses
from pixgate.core.http.schemas import iso
from pixgate.core.money import format_amount
from pixgate.refunds import service as refunds
from pixgate.refunds.rules import (
    DEVOLUCAO_STATUS,
    END_TO_END_PATTERN,
    REFUND_ID_PATTERN,
    DevolucaoStatus,
    Natureza,
    motivo,
)
from pixgate.refunds.schemas import DevolucaoRequest, DevolucaoResponse, Horario

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


@router.put(
    "/pix/{e2eid}/devolucao/{id}",
    status_code=201,
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Request a refund of a received PIX (Central-Bank style)",
    responses=openapi_responses(
        errors.ValidationFailed,
        errors.RefundAmountExceeded,
        errors.RefundIdReused,
        errors.NotFound,
        errors.DevolucaoDeadlineExceeded,
        errors.DevolucaoInsufficientBalance,
        errors.ProviderUnavailable,
        family=Family.CENTRAL_BANK,
    ),
)
async def request_devolucao(
    e2eid: EndToEndId,
    refund_id: RefundId,
    body: DevolucaoRequest,
    response: Response,
    rt: RuntimeDep,
    who: CurrentAccount,
    instructions: ProviderInstructions,
) -> DevolucaoResponse:
    order = refunds.RefundOrder(
        amount=refunds.amount_of(body.valor, "valor"),
        external_id=refund_id,
        description=body.descricao,
        natureza=Natureza(body.natureza),
    )
    made = await refunds.devolucao(rt, who.account_id, e2eid, order, instructions=instructions)
    if made.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return shape(made.refund)


@router.get(
    "/pix/{e2eid}/devolucao/{id}",
    response_model=DevolucaoResponse,
    response_model_exclude_none=True,
    summary="Read a refund of a received PIX (Central-Bank style)",
    responses=openapi_responses(
        errors.ValidationFailed, errors.NotFound, family=Family.CENTRAL_BANK
    ),
)
async def read_devolucao(
    e2eid: EndToEndId,
    refund_id: RefundId,
    rt: RuntimeDep,
    who: CurrentAccount,
) -> DevolucaoResponse:
    return shape(await refunds.get_devolucao(rt, who.account_id, e2eid, refund_id))


def shape(refund: refunds.Refund) -> DevolucaoResponse:
    status = DEVOLUCAO_STATUS[refund.status]
    return DevolucaoResponse(
        id=refund.external_id or "",
        rtr_id=refund.end_to_end_id or "",
        valor=format_amount(refund.amount),
        natureza=Natureza(refund.natureza or Natureza.ORIGINAL),
        descricao=refund.description,
        horario=Horario(
            solicitacao=iso(refund.created_at) or "",
            liquidacao=iso(refund.processed_at) if status is DevolucaoStatus.DEVOLVIDO else None,
        ),
        status=status,
        motivo=motivo(refund.error_message) if status is DevolucaoStatus.NAO_REALIZADO else None,
    )
