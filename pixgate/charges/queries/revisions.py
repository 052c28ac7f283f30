"""Every revision of a cob (`charge_revisions`): creation is revision 0, each PATCH adds
one. `GET /cob/{txid}?revisao=n` reads them back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pixgate.charges.queries.charges import Charge
from pixgate.core.db.pool import Connection
from pixgate.core.labels import ChargeStatus


@dataclass(frozen=True, slots=True)
class Revision:
    charge_id: int
    revision: int
    status: ChargeStatus
    amount: int
    expires_at: datetime
    body: dict[str, Any]
    created_at: datetime


async def record(conn: Connection, charge: Charge) -> None:
    """The charge as it is now, as its current revision."""
    await conn.execute(
        """
        INSERT INTO charge_revisions
            (charge_id, revision, status, amount, expires_at, body, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        """,
        charge.id,
        charge.revision,
        charge.status,
        charge.amount,
        charge.expires_at,
        charge.body,
        charge.updated_at,
    )


async def get(conn: Connection, charge_id: int, revision: int) -> Revision | None:
    row = await conn.fetchrow(
        "SELECT * FROM charge_revisions WHERE charge_id = $1 AND revision = $2",
        charge_id,
        revision,
    )
    if row is None:
        return None
    values = dict(row)
    values["status"] = ChargeStatus(values["status"])
    return Revision(**values)
