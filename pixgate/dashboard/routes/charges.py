"""The dashboard's charges: the list (newest first), the new-charge form, and a charge's
page, which keeps its status fresh by asking a small JSON address and, in the sandbox, can
pay the charge as an outside payer would."""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID

import structlog
from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from pydantic import ValidationError

from pixgate.accounts.public import RuntimeDep
from pixgate.charges.public import (
    CashInPayer,
    CashInTransaction,
    cash_in,
    cash_in_order,
    charge_list,
    qr_code_png,
)
from pixgate.charges.public import charges_service as charges
from pixgate.core.errors import (
    DuplicateExternalId,
    NotFound,
    ProviderExpirationBelowMinimum,
    ValidationFailed,
)
from pixgate.core.timestamps import iso
from pixgate.dashboard.routes.transactions import MAX_PAGE, whole
from pixgate.dashboard.views import labels, messages, records
from pixgate.dashboard.views.charge_form import (
    DEFAULT_EXPIRATION_S,
    FIELDS,
    expiration_bounds,
)
from pixgate.dashboard.views.forms import SignedInForm, field
from pixgate.dashboard.views.render import DashboardRoute, Signed, SignedIn, page
from pixgate.runtime import Runtime

log = structlog.get_logger(__name__)

router = APIRouter(route_class=DashboardRoute)

LIST_SIZE = 20
SANDBOX_PAYER = charges.Payer(name="Pagador Sandbox", document="52998224725")
"""Who pays a charge when the sandbox's "Simulate payment" is pressed (a valid CPF)."""
PAID_NOTICE = "Payment simulated: the charge was paid by Pagador Sandbox."


@router.get("/dashboard/charges")
async def charge_index(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    """The account's charges, cash-in and cob alike, newest first."""
    problems: list[str] = []
    number = whole(request.query_params.get("page", ""), "page", 1, 1, MAX_PAGE, problems)
    if problems:
        raise ValidationFailed(problems)
    found = await charge_list.page(rt, signed.account_id, number=number, size=LIST_SIZE)
    return page(request, rt, "charges.html", {"signed": signed, "found": found})


def _charge_form(
    request: Request,
    rt: Runtime,
    signed: Signed,
    values: dict[str, str],
    problems: list[str],
    status: int = 200,
) -> HTMLResponse:
    shortest, longest = expiration_bounds(rt.settings)
    return page(
        request,
        rt,
        "charge_new.html",
        {
            "signed": signed,
            "values": values,
            "problems": problems,
            "shortest": shortest,
            "longest": longest,
        },
        status=status,
    )


@router.get("/dashboard/charges/new")
async def charge_form(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    values = dict.fromkeys(FIELDS, "") | {"expiration": str(DEFAULT_EXPIRATION_S)}
    return _charge_form(request, rt, signed, values, [])


@router.post("/dashboard/charges")
async def create_charge(request: Request, rt: RuntimeDep, posted: SignedInForm) -> Response:
    """A cash-in charge, validated as POST /api/pix/cash-in validates it."""
    signed, form = posted.signed, posted.form
    values = {name: field(form, name) for name in FIELDS}
    try:
        tx = CashInTransaction.model_validate(
            {
                "value": values["value"].replace(",", "."),
                "description": values["description"],
                "externalId": values["externalId"] or f"dashboard-{uuid.uuid4().hex[:16]}",
                "expirationTime": values["expiration"] or str(DEFAULT_EXPIRATION_S),
            }
        )
        payer = CashInPayer.model_validate(
            {"fullName": values["payerName"], "document": values["payerDocument"]}
        )
        created = await cash_in.create(rt, signed.account_id, cash_in_order(tx, payer))
    except ValidationError as exc:
        return _charge_form(request, rt, signed, values, messages.reasons(exc.errors()), 400)
    except (ValidationFailed, DuplicateExternalId, ProviderExpirationBelowMinimum) as exc:
        return _charge_form(request, rt, signed, values, exc.messages, 400)
    return RedirectResponse(f"/dashboard/charges/{created.transaction_id}", status_code=303)


@router.get("/dashboard/charges/{transaction_id}")
async def charge(
    request: Request, rt: RuntimeDep, signed: SignedIn, transaction_id: UUID
) -> Response:
    found = await cash_in.find(rt, signed.account_id, transaction_id)
    return page(
        request,
        rt,
        "charge.html",
        {
            "signed": signed,
            "charge": found,
            "final": found.status in records.FINAL_CHARGE_STATUSES,
            "sandbox": rt.settings.sandbox,
            "notice": PAID_NOTICE if request.query_params.get("done") == "paid" else None,
        },
    )


@router.get("/dashboard/charges/{transaction_id}/status")
async def charge_status(rt: RuntimeDep, signed: SignedIn, transaction_id: UUID) -> Response:
    """The charge's status as its page shows it, for the page to refresh itself."""
    found = await cash_in.find(rt, signed.account_id, transaction_id)
    shown: dict[str, Any] = {
        "status": found.status,
        "label": labels.status_label(found.status),
        "badge": labels.badge(found.status),
        "paidAt": iso(found.paid_at),
        "final": found.status in records.FINAL_CHARGE_STATUSES,
    }
    return JSONResponse(shown)


@router.get("/dashboard/charges/{transaction_id}/qr.png")
async def charge_qr(rt: RuntimeDep, signed: SignedIn, transaction_id: UUID) -> Response:
    """The copy-and-paste code as a QR image (error correction M, as the API draws it)."""
    found = await cash_in.find(rt, signed.account_id, transaction_id)
    return Response(qr_code_png(found.pix_code), media_type="image/png")


@router.post("/dashboard/charges/{transaction_id}/simulate-payment")
async def simulate_payment(rt: RuntimeDep, posted: SignedInForm, transaction_id: UUID) -> Response:
    """Sandbox only: an outside payer pays the charge by its code, as POST /sandbox/pix/pay
    does; outside the sandbox the address does not exist (404)."""
    if not rt.settings.sandbox:
        raise NotFound("There is no such page in the dashboard.")
    found = await cash_in.find(rt, posted.signed.account_id, transaction_id)
    await charges.sandbox_pay(rt, found.pix_code, SANDBOX_PAYER)
    log.info("dashboard.payment_simulated", account_id=posted.signed.account_id)
    return RedirectResponse(f"/dashboard/charges/{transaction_id}?done=paid", status_code=303)
