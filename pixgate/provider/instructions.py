"""What a request told the provider about a payout it settles later, kept until settlement.

The value is opaque here: services write it with the payout (`keep`, or `payout_create()`'s
last argument) and only the provider reads it back (`get`; a payment's, with its key's
entry, `sandbox_dict.payment_view`). A payout without instructions has no row, so the table
holds only the few that asked for something.
"""

from __future__ import annotations

from pixgate.core.db.batches import read_by_key
from pixgate.core.db.pool import Connection, Database


async def keep(conn: Connection, transaction_id: int, value: str | None) -> None:
    """Keep a payout's instructions, in the caller's transaction; nothing for none."""
    if value is not None:
        await conn.execute(
            "INSERT INTO provider_instructions (transaction_id, value) VALUES ($1, $2)",
            transaction_id,
            value,
        )


INSTRUCTIONS = read_by_key(
    "SELECT * FROM provider_instructions WHERE transaction_id = ANY($1::bigint[])",
    "transaction_id",
    lambda r: str(r["value"]),
)


async def get(db: Database, transaction_id: int) -> str | None:
    """A payout's instructions, read with the others asked for meanwhile (every settlement
    asks)."""
    return await db.batcher(INSTRUCTIONS).submit("provider_instructions", transaction_id)
