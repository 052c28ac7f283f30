"""Webhook configuration, resend, the event list, and the OpenAPI
`webhooks` section that documents every payload a receiver gets.

Simple-body errors (docs/errors.md). Unless `webhook_api_enabled` is on, POST /api/webhooks
answers the spec's `success: false` and GET /api/webhooks the spec's empty list, both saying in
the answer that the API is off and naming the setting: an empty list alone read as "no
webhooks" while webhooks existed.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, FastAPI, Path, Query, Request, Response
from fastapi.openapi.models import Example

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core.http import rate_limit
from pixgate.core.http.error_schemas import ApiError
from pixgate.core.http.intake.params import Page, PageSize
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.core.http.responses import show_read
from pixgate.core.http.schemas import Timestamp, iso
from pixgate.core.masking import mask_header_values
from pixgate.ledger.public import PageMetadata
from pixgate.webhooks import schemas
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.rules import webhooks as rules

router = APIRouter(
    route_class=PixgateRoute, tags=["webhooks"], responses={401: {"model": ApiError}}
)

DISABLED_MESSAGE = (
    "This route is disabled and persisted nothing (the operator turns it on with "
    "PIXGATE_WEBHOOK_API_ENABLED=true). Manage webhooks in the dashboard (Settings, "
    "Webhooks: /dashboard/webhooks) or with `pixgate webhooks add`."
)
RESEND_RATE = rate_limit.item("60/minute")

EventTypeParam = Literal[
    "cash_in", "cash_out", "refund_in", "refund_out", "med_created", "med_accepted", "med_rejected"
]


@router.post(
    "/api/webhooks",
    response_model=schemas.WebhookCreated,
    summary="Add a webhook URL for an event type",
    description="Disabled unless PIXGATE_WEBHOOK_API_ENABLED is on: then answers "
    "`success: false` and persists nothing. Enabled: adds the URL (at most 3 active per "
    "event type); the same URL again updates its headers and version.",
    responses={400: {"model": ApiError}, 404: {"model": ApiError}},
)
async def add_webhook(
    caller: Annotated[Caller, granted(Scope.WEBHOOK_WRITE)],
    body: schemas.WebhookCreate,
) -> schemas.WebhookCreated:
    if not caller.rt.settings.webhook_api_enabled:
        return schemas.WebhookCreated(success=False, message=DISABLED_MESSAGE)
    added = await webhooks.add(
        caller.rt,
        caller.account_id,
        event_type=body.eventType,
        url=body.url,
        headers=[(h.key, h.value) for h in body.headers],
        version=body.version,
    )
    verb = "created" if added.created else "updated"
    return schemas.WebhookCreated(success=True, message=f"Webhook {verb} for {body.eventType}")


@router.get(
    "/api/webhooks",
    response_model=schemas.WebhookList,
    summary="List the account's webhooks",
    description="Off unless PIXGATE_WEBHOOK_API_ENABLED is on: then an empty list with "
    "`enabled` false and a `message` naming the setting, whatever webhooks exist; it must not "
    "be used to verify configuration.",
    responses={404: {"model": ApiError}},
)
async def list_webhooks(
    caller: Annotated[Caller, granted(Scope.WEBHOOK_READ)],
) -> schemas.WebhookList:
    if not caller.rt.settings.webhook_api_enabled:
        return schemas.WebhookList(
            account_id=caller.account_id,
            webhooks=[],
            total=0,
            enabled=False,
            message=DISABLED_MESSAGE,
        )
    found = await webhooks.list_endpoints(caller.rt, caller.account_id)
    return schemas.WebhookList(
        account_id=caller.account_id,
        webhooks=[
            schemas.WebhookItem(
                id=e.id,
                type=e.event_type,
                url=e.url,
                headers=mask_header_values(e.headers),
                is_active=e.is_active,
                created_at=iso(e.created_at) or "",
                version=e.version,
            )
            for e in found
        ],
        total=len(found),
    )


@router.post(
    "/api/resend-webhook/{transactionIdentifier}",
    response_model=schemas.ResendResponse,
    summary="Resend a transaction's webhook now",
    description="`transactionIdentifier`: numeric transaction id, UUID transactionId, "
    "externalId, 32-character end-to-end id, or an event id `evt_<n>` from GET /api/events. "
    "One synchronous attempt (no retries) to `url` if given (not persisted), else to every active "
    "URL of the event type; the answer is the first URL's and every attempt is logged. "
    "60 requests per minute per account.",
    responses={400: {"model": ApiError}, 404: {"model": ApiError}, 429: {"model": ApiError}},
)
async def resend_webhook(
    request: Request,
    caller: Annotated[Caller, granted(Scope.WEBHOOK_WRITE)],
    transaction_identifier: Annotated[
        str, Path(alias="transactionIdentifier", min_length=1, max_length=64)
    ],
    body: Annotated[schemas.ResendRequest | None, Body()] = None,
) -> schemas.ResendResponse:
    await rate_limit.enforce(request, caller.rt, RESEND_RATE, "resend-webhook", caller.account_id)
    result = await webhooks.resend(
        caller.rt, caller.account_id, transaction_identifier, body.url if body else None
    )
    return schemas.ResendResponse(
        message=result.message,
        webhook_log_id=result.webhook_log_id,
        sent_at=iso(result.sent_at) or "",
        status_code=result.status_code,
    )


@router.get(
    "/api/events",
    response_model=schemas.EventList,
    summary="List the account's webhook events and their delivery state",
    description="deliveryState aggregates the event's deliveries: failed if any failed, "
    "else pending if any is pending, else delivered; `none` when no URL was configured. "
    "Any event can be redelivered with POST /api/resend-webhook/evt_<n>.",
    responses={400: {"model": ApiError}},
)
async def list_events(
    response: Response,
    caller: Annotated[Caller, granted(Scope.WEBHOOK_READ)],
    type: Annotated[EventTypeParam | None, Query()] = None,
    delivery_state: Annotated[
        Literal["delivered", "pending", "failed", "none"] | None,
        Query(alias="deliveryState"),
    ] = None,
    start_date: Annotated[Timestamp | None, Query(alias="startDate")] = None,
    end_date: Annotated[Timestamp | None, Query(alias="endDate")] = None,
    page: Page = 1,
    size: PageSize = 20,
) -> schemas.EventList:
    found = await webhooks.list_events(
        caller.rt,
        caller.account_id,
        event_type=type,
        delivery_state=delivery_state,
        start=start_date,
        end=end_date,
        page=page,
        size=size,
    )
    show_read(response, found.read)
    return schemas.EventList(
        data=[
            schemas.EventItem(
                id=e.public_id,
                type=e.type,
                transaction_id=e.transaction_id,
                created_at=iso(e.created_at) or "",
                delivery_state=e.delivery_state,
            )
            for e in found.items
        ],
        metadata=PageMetadata.model_validate(
            PageMetadata.values_of(
                page, size, found.total, more=page < math.ceil(found.total / size)
            )
        ),
    )


# --- the OpenAPI `webhooks` section ---------------------------------------------------------

_SIGNING = (
    "Signed the Standard Webhooks way: `webhook-id` (stable across retries of one event to one "
    "URL), `webhook-timestamp` (Unix seconds), `webhook-signature` (`v1,` + base64 "
    "HMAC-SHA256 of `id.timestamp.body`, keyed with the base64-decoded part of the account's "
    "`whsec_` secret; several space-separated signatures during a secret rotation). Verify with "
    "`pixgate.webhooks.verify_signature`. Answer 2xx quickly; anything else (or a redirect, or "
    "no answer within the timeout) is retried with exponential backoff for at least 3 days."
)


def _document(
    app: FastAPI, name: str, summary: str, model: type[Any], examples: dict[str, Example]
) -> None:
    async def receiver(payload: Any) -> None:
        """Implemented by the integrator."""

    # Set at run time: the model is a variable, which a (postponed) annotation cannot name.
    receiver.__annotations__ = {
        "payload": Annotated[model, Body(openapi_examples=examples)],
        "return": None,
    }
    app.webhooks.post(
        name, summary=summary, description=_SIGNING, responses={200: {"description": "received"}}
    )(receiver)


def register_openapi_webhooks(app: FastAPI) -> None:
    """Document every payload (v1 and v2) with examples rendered by the real renderer."""
    for event_type, name in rules.V1_EVENT_NAMES.items():
        examples: dict[str, Example] = {"confirmed": {"value": schemas.example(event_type, "v1")}}
        if not event_type.startswith("med_"):
            examples["error"] = {"value": schemas.example(event_type, "v1", status="ERROR")}
        _document(
            app,
            f"{event_type} (v1)",
            f"{name}: the {event_type} event, version v1",
            schemas.V1Payload,
            examples,
        )
    v2 = {
        "TRANSFER": ("cash_out", schemas.V2Transfer),
        "RECEIVE": ("cash_in", schemas.V2Receive),
        "REFUND": ("refund_in", schemas.V2Refund),
    }
    for kind, (event_type, model) in v2.items():
        v2_examples: dict[str, Example] = {
            "liquidated": {"value": schemas.example(event_type, "v2")},
            "error": {"value": schemas.example(event_type, "v2", status="ERROR")},
        }
        if kind == "REFUND":
            v2_examples["refund received (refund_out)"] = {
                "value": schemas.example("refund_out", "v2")
            }
        _document(
            app,
            f"{kind} (v2)",
            f"{kind}: version v2 ({event_type}{', refund_out' if kind == 'REFUND' else ''})",
            model,
            v2_examples,
        )
