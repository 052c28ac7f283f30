"""GET /api/med: the account's MED cases, filtered and paged."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core.http import rate_limit
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.params import Page, PageSize
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import JSONResponse, exact
from pixgate.core.http.schemas import Timestamp
from pixgate.med import service as med
from pixgate.med.rules import MedStatus, wire
from pixgate.med.schemas import MedItem, MedMetadata, MedPage

router = APIRouter(
    route_class=PixgateRoute,
    tags=["med"],
    responses={400: {"model": ApiError}, 401: {"model": ApiError}, 429: {"model": ApiError}},
)


@router.get("/api/med", response_model=MedPage, summary="MED cases")
async def list_med(
    request: Request,
    caller: Annotated[Caller, granted(Scope.PIX_READ)],
    status: MedStatus | None = None,
    isReconciled: bool | None = None,
    startDate: Annotated[
        Timestamp | None, Query(description="ISO 8601 date-time; cases opened from then")
    ] = None,
    endDate: Annotated[
        Timestamp | None, Query(description="ISO 8601 date-time; cases opened until then")
    ] = None,
    page: Page = 1,
    pageSize: PageSize = 20,
) -> JSONResponse:
    await rate_limit.enforce(
        request,
        caller.rt,
        rate_limit.item(caller.rt.settings.med_rate_limit),
        "med",
        caller.account_id,
    )
    found = await med.list_cases(
        caller.rt,
        caller.account_id,
        med.CaseQuery(status, isReconciled, startDate, endDate, page, pageSize),
    )
    page_of_cases = MedPage(
        data=[MedItem.model_validate(wire(case)) for case in found.cases],
        metadata=MedMetadata(
            total=found.total,
            page=found.page,
            page_size=found.page_size,
            total_pages=found.total_pages,
        ),
    )
    return exact(page_of_cases)
