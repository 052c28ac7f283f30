"""The charge at a location, as the payer's bank fetches it: a PS256 JWS whose payload is the
API Pix's CobPayload (`rules.cob_payload`), signed with a key named by `kid` and published at
`jku`."""

from __future__ import annotations

from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.rules import cob_payload
from pixgate.charges.service.cob import receiving_key
from pixgate.charges.service.expiry import status_at
from pixgate.charges.service.locations import jwks_url
from pixgate.core.errors import Gone, NotFound
from pixgate.runtime import Runtime


async def signed_payload(rt: Runtime, token: str) -> str:
    """The charge at `token`: NotFound when the location serves none, Gone once it is paid,
    removed or expired (the document leaves a PSP free to answer so)."""
    async with rt.db.connection() as conn:
        charge = await charge_rows.by_location_token(conn, token)
        if charge is None:
            raise NotFound("no charge at this location")
        now = rt.clock.now()
        status = status_at(charge, now)
        if status not in ("ATIVA", "PENDING"):
            raise Gone(f"the charge is {status}")
        chave = await receiving_key(conn, charge)
    payload = cob_payload.render(
        txid=charge.txid,
        revision=charge.revision,
        amount=charge.amount,
        created_at=charge.created_at,
        expires_at=charge.expires_at,
        body=charge.body,
        chave=chave,
        now=now,
    )
    return rt.location_signer.sign(payload, jku=jwks_url(rt.settings))
