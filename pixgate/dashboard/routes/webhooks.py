"""The dashboard's Settings > Webhooks page (the API's rules, the signing secret, a test
event per URL): the services the API and the CLI call. The delivery log is `deliveries`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import FormData

from pixgate.accounts.public import RuntimeDep
from pixgate.core.errors import (
    Conflict,
    InvalidWebhookConfig,
    UnsafeWebhookDestination,
    WebhookLimitReached,
)
from pixgate.core.http import rate_limit
from pixgate.core.masking import mask_header_values
from pixgate.dashboard.routes.deliveries import BigintId
from pixgate.dashboard.views import labels
from pixgate.dashboard.views.forms import SignedInForm
from pixgate.dashboard.views.forms import field as form_field
from pixgate.dashboard.views.render import DashboardRoute, Signed, SignedIn, page
from pixgate.runtime import Runtime
from pixgate.webhooks.public import RESEND_RATE
from pixgate.webhooks.public import service as webhooks
from pixgate.webhooks.public import webhook_rules as rules

router = APIRouter(route_class=DashboardRoute)

DONE = {
    "created": "Webhook added.",
    "updated": "Webhook updated: same URL and event, new headers and version.",
    "deactivated": "Webhook deactivated: it receives no more events.",
}
_CONFIG_ERRORS = (InvalidWebhookConfig, UnsafeWebhookDestination, WebhookLimitReached)


def _webhooks_page(
    request: Request,
    rt: Runtime,
    signed: Signed,
    endpoints: list[webhooks.Endpoint],
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    active = {t: 0 for t in rules.EVENT_TYPES}
    for endpoint in endpoints:
        active[endpoint.event_type] += endpoint.is_active
    defaults: dict[str, Any] = {
        "notice": None,
        "problems": [],
        "secret": None,
        "form": {"eventType": "cash_out", "url": "", "version": "v1", "headers": []},
    }
    return page(
        request,
        rt,
        "webhooks.html",
        {
            "signed": signed,
            "endpoints": endpoints,
            "active": active,
            "event_types": rules.EVENT_TYPES,
            "v2_types": rules.V2_EVENT_TYPES,
            "max_active": rules.MAX_ACTIVE_PER_EVENT,
            "max_headers": rules.MAX_HEADERS,
            "blocked": sorted(rules.BLOCKED_HEADER_NAMES),
            "masked": mask_header_values,
            **defaults,
            **context,
        },
        status=status,
    )


@router.get("/dashboard/webhooks")
async def webhook_settings(request: Request, rt: RuntimeDep, signed: SignedIn) -> Response:
    endpoints = await webhooks.list_endpoints(rt, signed.account_id)
    notice = DONE.get(request.query_params.get("done", ""))
    form: dict[str, Any] | None = None
    edit = request.query_params.get("edit", "")
    if edit.isascii() and edit.isdigit():
        chosen = next((e for e in endpoints if e.id == int(edit)), None)
        if chosen is not None:  # the values of headers are not shown back: typed again
            form = {
                "eventType": chosen.event_type,
                "url": chosen.url,
                "version": chosen.version,
                "headers": [(name, "") for name in chosen.headers],
            }
    if form is None:
        return _webhooks_page(request, rt, signed, endpoints, notice=notice)
    return _webhooks_page(request, rt, signed, endpoints, notice=notice, form=form)


def _header_pairs(form: FormData) -> list[tuple[str, str]]:
    names = [v for v in form.getlist("headerName") if isinstance(v, str)]
    values = [v for v in form.getlist("headerValue") if isinstance(v, str)]
    values += [""] * (len(names) - len(values))
    return [(n.strip(), v) for n, v in zip(names, values, strict=False) if n.strip() or v]


@router.post("/dashboard/webhooks")
async def save_webhook(request: Request, rt: RuntimeDep, posted: SignedInForm) -> Response:
    """Add a URL, or update the headers and version of the same URL for the same event."""
    signed, form = posted.signed, posted.form
    event_type, url = form_field(form, "eventType"), form_field(form, "url")
    version, headers = form_field(form, "version") or "v1", _header_pairs(form)
    # shown back on a refusal: valid names only, never a value (a pasted credential)
    shown = [(name if rules.is_header_name(name) else "", "") for name, _ in headers]
    entered = {"eventType": event_type, "url": url, "version": version, "headers": shown}
    try:
        added = await webhooks.add(
            rt, signed.account_id, event_type=event_type, url=url, headers=headers, version=version
        )
    except _CONFIG_ERRORS as exc:
        endpoints = await webhooks.list_endpoints(rt, signed.account_id)
        problems = exc.messages
        return _webhooks_page(
            request, rt, signed, endpoints, status=400, problems=problems, form=entered
        )
    secret = None
    if added.created:
        try:  # the signing secret is shown once: with the first URL, if never shown yet
            secret = await webhooks.reveal_secret(rt, signed.account_id)
        except Conflict:
            secret = None
    if secret is None:
        done = "created" if added.created else "updated"
        return RedirectResponse(f"/dashboard/webhooks?done={done}", status_code=303)
    endpoints = await webhooks.list_endpoints(rt, signed.account_id)
    return _webhooks_page(request, rt, signed, endpoints, notice=DONE["created"], secret=secret)


@router.post("/dashboard/webhooks/{webhook_id}/deactivate")
async def deactivate_webhook(
    rt: RuntimeDep, posted: SignedInForm, webhook_id: BigintId
) -> Response:
    await webhooks.deactivate(rt, posted.signed.account_id, webhook_id)
    return RedirectResponse("/dashboard/webhooks?done=deactivated", status_code=303)


@router.post("/dashboard/webhooks/secret")
async def reveal_secret(request: Request, rt: RuntimeDep, posted: SignedInForm) -> Response:
    """The signing secret, once; afterwards only a rotation shows one."""
    signed = posted.signed
    endpoints = await webhooks.list_endpoints(rt, signed.account_id)
    try:
        secret = await webhooks.reveal_secret(rt, signed.account_id)
    except Conflict:
        return _webhooks_page(
            request,
            rt,
            signed,
            endpoints,
            status=409,
            problems=["The signing secret was already shown. Rotate it to get a new one."],
        )
    return _webhooks_page(request, rt, signed, endpoints, secret=secret)


@router.post("/dashboard/webhooks/secret/rotate")
async def rotate_secret(request: Request, rt: RuntimeDep, posted: SignedInForm) -> Response:
    """A new secret, shown now; the old one keeps signing for the overlap window."""
    signed = posted.signed
    secret = await webhooks.rotate_secret(rt, signed.account_id)
    endpoints = await webhooks.list_endpoints(rt, signed.account_id)
    overlap_h = rt.settings.webhook_secret_overlap_s / 3600
    return _webhooks_page(
        request,
        rt,
        signed,
        endpoints,
        secret=secret,
        notice=f"Secret rotated. The previous one keeps signing for {overlap_h:g} h.",
    )


@router.post("/dashboard/webhooks/{webhook_id}/test")
async def send_test_event(
    request: Request, rt: RuntimeDep, posted: SignedInForm, webhook_id: BigintId
) -> Response:
    """A signed `webhook.test` POST to one of the account's active URLs, now; the page says
    what it answered. Counted in the resend limit: both POST on request."""
    signed = posted.signed
    await rate_limit.enforce(request, rt, RESEND_RATE, "resend-webhook", signed.account_id)
    sent = await webhooks.send_test(rt, signed.account_id, webhook_id)
    endpoints = await webhooks.list_endpoints(rt, signed.account_id)
    said = labels.answer(sent.attempt.status_code, sent.attempt.error, ok=sent.attempt.ok)
    line = f"Test event sent to {sent.url}: {said}"
    if sent.attempt.ok:
        return _webhooks_page(request, rt, signed, endpoints, notice=line)
    return _webhooks_page(request, rt, signed, endpoints, problems=[line])
