"""Charge locations: where a dynamic BR Code points, and the payer's bank fetches the charge."""

from __future__ import annotations

import secrets
from typing import Any

from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.service.expiry import status_at
from pixgate.core.errors import Gone, NotFound
from pixgate.core.money import format_amount
from pixgate.core.settings import Settings
from pixgate.core.timestamps import iso
from pixgate.runtime import Runtime


def new_location_token() -> str:
    """An unguessable token: knowing one location must not reveal any other charge."""
    return secrets.token_hex(16)


def location_url(settings: Settings, token: str) -> str:
    """The charge's location, served by this gateway under `/loc/{token}`."""
    return f"{settings.public_url.rstrip('/')}/loc/{token}"


def jwks_url(settings: Settings) -> str:
    """Where the keys that sign location payloads are published (the JWS `jku`)."""
    return f"{settings.public_url.rstrip('/')}/.well-known/pix-jwks.json"


async def signed_payload(rt: Runtime, token: str) -> str:
    """The charge at `token` as a PS256 JWS: 404 if unknown, 410 once paid, removed or expired."""
    async with rt.db.connection() as conn:
        charge = await charge_rows.by_location_token(conn, token)
    if charge is None:
        raise NotFound("no charge at this location")
    now = rt.clock.now()
    status = status_at(charge, now)
    if status not in ("ATIVA", "PENDING"):
        raise Gone(f"the charge is {status}")
    body: dict[str, Any] = charge.body
    payload: dict[str, Any] = {
        "calendario": {
            "criacao": iso(charge.created_at),
            "apresentacao": iso(now),
            "expiracao": int((charge.expires_at - charge.created_at).total_seconds()),
        },
        "txid": charge.txid,
        "revisao": charge.revision,
        "status": "ATIVA",
        "valor": {"original": format_amount(charge.amount)},
    }
    for field in ("chave", "devedor", "solicitacaoPagador", "infoAdicionais"):
        if body.get(field) is not None:
            payload[field] = body[field]
    return rt.location_signer.sign(payload, jku=jwks_url(rt.settings))
