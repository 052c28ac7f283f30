"""The API Pix's payload location, `GET /qr/v2/{token}` (the document's
`GET /{pixUrlAccessToken}`): what the payer's bank fetches when it reads a dynamic BR Code of
ours, without authentication. A PS256 JWS whose payload is the document's CobPayload; a
location that serves no payable charge is its `CobPayloadNaoEncontrado` (404)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from pixgate.accounts.public import RuntimeDep
from pixgate.charges.service import payload
from pixgate.core.errors import ChargePayloadGone, Gone
from pixgate.core.http import problems
from pixgate.core.http.errors import answering, api_pix_route

router = APIRouter(
    route_class=answering(
        api_pix_route(
            problems.REQUISICAO_INVALIDA, "", not_found=problems.COB_PAYLOAD_NAO_ENCONTRADO
        ),
        {Gone: ChargePayloadGone},
    ),
    tags=["locations"],
)


@router.get(
    "/qr/v2/{token}",
    summary="The charge at a payload location, as a PS256 JWS",
    response_class=Response,
    responses={
        200: {"content": {"application/jose": {}}},
        404: {"description": "CobPayloadNaoEncontrado: no payable charge at this location"},
    },
)
async def payload_at(token: str, rt: RuntimeDep) -> Response:
    jws = await payload.signed_payload(rt, token)
    return Response(jws, media_type="application/jose")
