"""The API Pix's CobPayload: what a location serves for a payable charge, before signing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pixgate.core.money import format_amount
from pixgate.core.timestamps import iso

ECHOED = ("devedor", "solicitacaoPagador", "infoAdicionais")
"""Members of the cob's stored request shown to the payer as they are."""


def render(
    *,
    txid: str,
    revision: int,
    amount: int,
    created_at: datetime,
    expires_at: datetime,
    body: dict[str, Any],
    chave: str,
    now: datetime,
) -> dict[str, Any]:
    """The payload of an ATIVA charge (`body`: a cob's stored request; empty for cash-in),
    presented (`apresentacao`) at `now`."""
    payload: dict[str, Any] = {
        "calendario": {
            "criacao": iso(created_at),
            "apresentacao": iso(now),
            "expiracao": int((expires_at - created_at).total_seconds()),
        },
        "txid": txid,
        "revisao": revision,
        "status": "ATIVA",
        "valor": {
            "original": format_amount(amount),
            "modalidadeAlteracao": body.get("modalidadeAlteracao", 0),
        },
        "chave": chave,
    }
    return payload | {field: body[field] for field in ECHOED if body.get(field) is not None}
