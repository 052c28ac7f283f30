"""A charge's life after creation: revisions, cancellation, expiry (cob and cash-in alike)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pixgate.charges.queries.charges import Charge, by_txid, charge_or_none
from pixgate.core.db.pool import Connection
from pixgate.ledger.public import Transaction


async def lock_by_txid(conn: Connection, account_id: int, kind: str, txid: str) -> Charge | None:
    return await by_txid(conn, account_id, kind, txid, lock=True)


async def revise(
    conn: Connection,
    charge_id: int,
    *,
    amount: int,
    pix_code: str,
    expires_at: datetime,
    body: dict[str, Any],
    now: datetime,
) -> Charge:
    """A new revision of an open charge; its PENDING payment follows the amount."""
    row = await conn.fetchrow(
        """
        WITH charge AS (
            UPDATE charges SET amount = $2, pix_code = $3, expires_at = $4, body = $5,
                               revision = revision + 1, updated_at = $6
            WHERE id = $1
            RETURNING *
        ), payment AS (
            UPDATE transactions SET amount = $2
            WHERE id = (SELECT transaction_id FROM charge) AND status = 'PENDING'
        )
        SELECT * FROM charge
        """,
        charge_id,
        amount,
        pix_code,
        expires_at,
        body,
        now,
    )
    assert row is not None
    return Charge.from_record(row)


async def close(
    conn: Connection,
    charge_id: int,
    *,
    status: str,
    error_code: str,
    now: datetime,
    only_if_expired: bool,
    new_revision: bool = False,
) -> Charge | None:
    """Open -> removed/expired, once; the PENDING payment ends in ERROR with `error_code`.

    With `only_if_expired`, nothing happens unless the charge's time has come (an expiry
    job that runs early, after a revision pushed expiration out, does nothing).
    `new_revision`: the receiver's removal is a revision of the cob (its PATCH's).
    """
    row = await conn.fetchrow(
        """
        WITH charge AS (
            UPDATE charges SET status = $2, updated_at = $3,
                               revision = revision + CASE WHEN $6 THEN 1 ELSE 0 END
            WHERE id = $1 AND status IN ('PENDING', 'ATIVA')
              AND (NOT $5 OR expires_at <= $3)
            RETURNING *
        ), payment AS (
            UPDATE transactions SET status = 'ERROR', error_code = $4,
                                    error_message = 'the charge was not paid', processed_at = $3
            WHERE id = (SELECT transaction_id FROM charge) AND status = 'PENDING'
        )
        SELECT * FROM charge
        """,
        charge_id,
        status,
        now,
        error_code,
        only_if_expired,
        new_revision,
    )
    return charge_or_none(row)


async def relocate(conn: Connection, charge_id: int, *, token: str, pix_code: str) -> Charge:
    """The charge moved to another location: its token and code follow; not a revision."""
    row = await conn.fetchrow(
        "UPDATE charges SET location_token = $2, pix_code = $3 WHERE id = $1 RETURNING *",
        charge_id,
        token,
        pix_code,
    )
    assert row is not None
    return Charge.from_record(row)


async def payment_of(conn: Connection, transaction_id: int) -> Transaction | None:
    row = await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", transaction_id)
    return None if row is None else Transaction.from_record(row)
