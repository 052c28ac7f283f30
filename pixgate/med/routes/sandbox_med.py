"""POST /sandbox/med and /sandbox/med/{id}/analysis (sandbox mode only): the payer's bank
opens or cancels a MED case against a PIX the caller received, and the case is analysed."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from pixgate.accounts.public import Caller, Scope, granted, sandbox_only
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse, exact
from pixgate.med import service as med
from pixgate.med.rules import wire
from pixgate.med.schemas import MedItem, SandboxMedAnalysis, SandboxMedRequest

router = APIRouter(
    route_class=PixgateRoute,
    tags=["sandbox"],
    dependencies=[Depends(sandbox_only)],
    responses={400: {"model": ApiError}, 401: {"model": ApiError}, 404: {"model": ApiError}},
)

CaseId = Annotated[int, Path(ge=1, le=2**63 - 1, description="the MED case's id")]


@router.post(
    "/sandbox/med",
    status_code=201,
    response_model=MedItem,
    summary="Open a MED case (or cancel one, with reason REFUND_CANCELLATION)",
    responses={409: {"model": ApiError}},
)
async def open_case(
    body: SandboxMedRequest,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE)],
) -> JSONResponse:
    case = await med.request(
        caller.rt,
        caller.account_id,
        med.CaseRequest(body.end_to_end_id, body.reason, body.cause, body.description),
    )
    return exact(MedItem.model_validate(wire(case)), status_code=201)


@router.post(
    "/sandbox/med/{id}/analysis",
    response_model=MedItem,
    summary="Analyse a MED case: APPROVED returns the blocked amount, REJECTED releases it",
    responses={409: {"model": ApiError}},
)
async def analyse(
    id: CaseId,
    body: SandboxMedAnalysis,
    caller: Annotated[Caller, granted(Scope.PIX_WRITE)],
) -> JSONResponse:
    case = await med.analyse(caller.rt, caller.account_id, id, body.result, body.details)
    return exact(MedItem.model_validate(wire(case)))
