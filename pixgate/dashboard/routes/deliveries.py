"""The dashboard's delivery log: a compact table of the account's webhook deliveries (one row
per URL an event went to), filtered by state and event type; a page per delivery (the payload
it sends, every attempt with the receiver's status and body); Resend of an event to every
active URL of its type, and "resend to this URL" of one delivery. After a resend the page
says what each URL answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import HTMLResponse

from pixgate.accounts.public import RuntimeDep
from pixgate.core.errors import NoWebhookDestination, ValidationFailed
from pixgate.core.http import rate_limit
from pixgate.dashboard.views import labels
from pixgate.dashboard.views.forms import SignedInForm
from pixgate.dashboard.views.render import DashboardRoute, Signed, SignedIn, page
from pixgate.runtime import Runtime
from pixgate.webhooks.public import DELIVERY_STATES, RESEND_RATE
from pixgate.webhooks.public import service as webhooks
from pixgate.webhooks.public import webhook_rules as rules

router = APIRouter(route_class=DashboardRoute)

BigintId = Annotated[int, Path(ge=1, le=9_223_372_036_854_775_807)]
LOG_PAGE_SIZE = 20
MAX_PAGE = 2_147_483_647


def said(outcomes: Sequence[webhooks.ResendOutcome]) -> list[tuple[str, str, bool]]:
    """Each URL's outcome of a resend, as the banner lists it: (URL, what it did, ok)."""
    return [(o.url, labels.answer(o.status_code, o.error, ok=o.ok), o.ok) for o in outcomes]


async def _log_page(
    request: Request,
    rt: Runtime,
    signed: Signed,
    *,
    status: int = 200,
    resent: str | None = None,
    outcomes: list[tuple[str, str, bool]] | None = None,
    problems: list[str] | None = None,
) -> HTMLResponse:
    params = request.query_params
    state = params.get("status", "")
    event_type = params.get("type", "")
    number_text = params.get("page", "1")
    problems = list(problems or [])
    if state and state not in DELIVERY_STATES:
        problems.append("status: one of " + ", ".join(DELIVERY_STATES))
        state = ""
    if event_type and event_type not in rules.EVENT_TYPES:
        problems.append("event: one of " + ", ".join(rules.EVENT_TYPES))
        event_type = ""
    number = 1
    if number_text.isascii() and number_text.isdigit() and 1 <= int(number_text) <= MAX_PAGE:
        number = int(number_text)
    found = await webhooks.delivery_log(
        rt,
        signed.account_id,
        event_type=event_type or None,
        delivery_state=state or None,
        page=number,
        size=LOG_PAGE_SIZE,
    )
    kept = {k: v for k, v in {"status": state, "type": event_type}.items() if v}
    return page(
        request,
        rt,
        "deliveries.html",
        {
            "signed": signed,
            "log": found,
            "state": state,
            "event_type": event_type,
            "states": DELIVERY_STATES,
            "event_types": rules.EVENT_TYPES,
            "page": number,
            "has_next": number * LOG_PAGE_SIZE < found.total,
            "kept": kept,
            "resent": resent,
            "outcomes": outcomes or [],
            "problems": problems,
        },
        status=400 if problems and status == 200 else status,
    )


@router.get("/dashboard/deliveries")
async def delivery_log(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    return await _log_page(request, rt, signed)


@router.post("/dashboard/events/{event_id}/resend")
async def resend(
    request: Request, rt: RuntimeDep, posted: SignedInForm, event_id: BigintId
) -> Response:
    """POST /api/resend-webhook/evt_<n>'s service and rate limit (shared with the API): one
    attempt now to every active URL of the event's type; the page lists each one's answer."""
    signed = posted.signed
    await rate_limit.enforce(request, rt, RESEND_RATE, "resend-webhook", signed.account_id)
    try:
        result = await webhooks.resend(rt, signed.account_id, f"evt_{event_id}", None)
    except (NoWebhookDestination, ValidationFailed) as exc:
        return await _log_page(request, rt, signed, status=400, problems=[exc.text])
    return await _log_page(
        request, rt, signed, resent=f"evt_{event_id}", outcomes=said(result.outcomes)
    )


@router.get("/dashboard/deliveries/{delivery_id}")
async def delivery(
    request: Request, rt: RuntimeDep, signed: SignedIn, delivery_id: BigintId
) -> Response:
    """One of the account's deliveries; another account's answers 404 like an unknown id."""
    detail = await webhooks.delivery_detail(rt, signed.account_id, delivery_id)
    return page(request, rt, "delivery.html", {"signed": signed, "detail": detail, "outcomes": []})


@router.post("/dashboard/deliveries/{delivery_id}/resend")
async def resend_delivery(
    request: Request, rt: RuntimeDep, posted: SignedInForm, delivery_id: BigintId
) -> Response:
    """One attempt now of this delivery, to its own URL (the resend limit counts it)."""
    signed = posted.signed
    await rate_limit.enforce(request, rt, RESEND_RATE, "resend-webhook", signed.account_id)
    result = await webhooks.resend_delivery(rt, signed.account_id, delivery_id)
    detail = await webhooks.delivery_detail(rt, signed.account_id, delivery_id)
    return page(
        request,
        rt,
        "delivery.html",
        {"signed": signed, "detail": detail, "outcomes": said(result.outcomes)},
    )
