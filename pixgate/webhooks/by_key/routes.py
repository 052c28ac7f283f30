"""PUT/GET/DELETE /webhook/{chave} and GET /webhook of the Central Bank's API Pix, under its
base path: RFC 7807 problems (`WebhookOperacaoInvalida` for the webhook, its list's
`WebhookConsultaInvalida`), scopes `webhook.write` and `webhook.read`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.core.errors import NotFound, ValidationFailed
from pixgate.core.http import problems
from pixgate.core.http.errors import Family, api_pix_route, openapi_responses
from pixgate.core.http.intake.params import ItensPorPagina, PaginaAtual
from pixgate.core.http.schemas import AwareTimestamp, Paginacao
from pixgate.core.pix.keys import MAX_EMAIL
from pixgate.webhooks.by_key import schemas
from pixgate.webhooks.service import by_key

callbacks = APIRouter()


@callbacks.post(
    "{$request.body#/webhookUrl}/pix",
    name="listaPix",
    summary="A PIX received by the key, or a refund of one that ended",
    description="Signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, "
    "`webhook-signature`), over mutual TLS when PIXGATE_WEBHOOK_CLIENT_CERT is set; retried "
    "until a 2xx for at least 3 days (docs/webhooks.md).",
    responses={200: {"description": "received"}},
)
async def pix_received(body: schemas.PixNotificados) -> None:
    """Implemented by the integrator."""


router = APIRouter(
    route_class=api_pix_route(problems.WEBHOOK_INVALIDO, "webhook"), tags=["Webhook"]
)
list_router = APIRouter(
    route_class=api_pix_route(problems.WEBHOOK_CONSULTA_INVALIDA, ""), tags=["Webhook"]
)

DEFAULT_PAGE_SIZE = 100

Chave = Annotated[
    str, Path(min_length=1, max_length=MAX_EMAIL, description="one of the account's PIX keys")
]
Writer = Annotated[Caller, granted(Scope.WEBHOOK_WRITE)]
Reader = Annotated[Caller, granted(Scope.WEBHOOK_READ)]


@router.put(
    "/webhook/{chave}",
    status_code=200,
    response_class=Response,
    summary="Configure the webhook of a PIX key",
    description="Every PIX the key receives (a cob paid, a PIX sent to the key, one from "
    "another account of this gateway), and every refund of one that ends (DEVOLVIDO or "
    'NAO_REALIZADO), is POSTed to `webhookUrl` + `/pix` as `{"pix": [Pix]}`, the Pix as '
    "GET /pix/{e2eid} answers it. The key must be one of the account's. A key has one "
    "webhook: PUT again replaces it.",
    callbacks=callbacks.routes,
    responses={
        200: {"description": "configured"},
        **openapi_responses(ValidationFailed, family=Family.API_PIX),
    },
)
async def put_webhook(caller: Writer, chave: Chave, body: schemas.WebhookSolicitado) -> Response:
    await by_key.configure(caller.rt, caller.account_id, chave, body.webhookUrl)
    return Response(status_code=200)


@router.get(
    "/webhook/{chave}",
    response_model=schemas.WebhookCompleto,
    summary="Show the webhook of a PIX key",
    responses=openapi_responses(NotFound, family=Family.API_PIX),
)
async def get_webhook(caller: Reader, chave: Chave) -> schemas.WebhookCompleto:
    return schemas.WebhookCompleto.of(await by_key.get(caller.rt, caller.account_id, chave))


@router.delete(
    "/webhook/{chave}",
    status_code=204,
    response_class=Response,
    summary="Cancel the webhook of a PIX key",
    description="Pending notifications to it are not sent any more.",
    responses=openapi_responses(NotFound, family=Family.API_PIX),
)
async def delete_webhook(caller: Writer, chave: Chave) -> Response:
    await by_key.remove(caller.rt, caller.account_id, chave)
    return Response(status_code=204)


@list_router.get(
    "/webhook",
    response_model=schemas.WebhooksConsultados,
    response_model_exclude_none=True,
    summary="List the account's webhooks by key",
    description="Oldest first; `inicio` and `fim` bound when they were registered.",
    responses=openapi_responses(ValidationFailed, family=Family.API_PIX),
)
async def list_webhooks(
    caller: Reader,
    inicio: Annotated[
        AwareTimestamp | None, Query(description="registered from this instant on (included)")
    ] = None,
    fim: Annotated[
        AwareTimestamp | None, Query(description="registered up to this instant (included)")
    ] = None,
    pagina_atual: PaginaAtual = 0,
    itens_por_pagina: ItensPorPagina = DEFAULT_PAGE_SIZE,
) -> schemas.WebhooksConsultados:
    found = await by_key.page(
        caller.rt,
        caller.account_id,
        start=inicio,
        end=fim,
        number=pagina_atual,
        size=itens_por_pagina,
    )
    paginacao = Paginacao.of(pagina_atual, itens_por_pagina, found.total)
    return schemas.WebhooksConsultados(
        parametros=schemas.ParametrosConsultaWebhooks.of(inicio, fim, paginacao),
        webhooks=[schemas.WebhookCompleto.of(w) for w in found.items],
    )
