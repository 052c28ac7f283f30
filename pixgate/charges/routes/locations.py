"""Charge locations as BR Codes issued before the API Pix's payload path pointed:
GET /loc/{token}, without authentication (printed QR codes outlive any change of path; the
current path is `routes.qr`'s `/qr/v2/{token}`), and the keys that sign every payload."""

from __future__ import annotations

from fastapi import APIRouter, Response

from pixgate.accounts.public import RuntimeDep
from pixgate.charges.service import payload
from pixgate.core.http.error_schemas import SimpleError
from pixgate.core.http.errors import CentralBankRoute
from pixgate.core.http.key_schemas import JsonWebKeySet

router = APIRouter(route_class=CentralBankRoute, tags=["locations"])


@router.get(
    "/loc/{token}",
    summary="The charge at a location, as a PS256 JWS",
    response_class=Response,
    responses={
        200: {"content": {"application/jose": {}}},
        404: {"model": SimpleError},
        410: {"model": SimpleError},
    },
)
async def charge_at(token: str, rt: RuntimeDep) -> Response:
    jws = await payload.signed_payload(rt, token)
    return Response(jws, media_type="application/jose")


@router.get("/.well-known/pix-jwks.json", summary="Keys that sign location payloads")
async def location_keys(rt: RuntimeDep) -> JsonWebKeySet:
    return JsonWebKeySet.of(rt.location_signer.jwks())
