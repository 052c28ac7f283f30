"""Test data written straight to the tables, for cases that need many rows at chosen times.

Listing tests need hundreds of transactions spread over days; creating them through
payments would take minutes. Rows made here carry no ledger postings and leave the
balances alone, and outgoing ones are counted in the limits' usage as a payment would be,
so the ledger invariants still hold.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pixgate.core.db.pool import Connection
from pixgate.runtime import Runtime

COUNTERPART = {
    "name": "Maria Silva",
    "document": "52998224725",
    "bank": {
        "bankISPB": "60701190",
        "bankName": "Banco Teste",
        "bankCode": "341",
        "accountBranch": "0001",
        "accountNumber": "12345-6",
    },
}


async def insert_transactions(
    rt: Runtime,
    account_id: int,
    count: int,
    *,
    newest: datetime,
    step: timedelta = timedelta(minutes=1),
    operation: str = "WITHDRAW",
    status: str = "CONFIRMED",
    amount: int = 1000,
    fee: int = 0,
    pix_key: str | None = None,
    prefix: str = "ext",
    **extra: Any,
) -> list[int]:
    """`count` rows, the newest at `newest`, each `step` older than the previous."""
    async with rt.db.connection() as conn:
        ids: list[int] = [
            r["id"]
            for r in await conn.fetch(
                """
                WITH made AS (
                INSERT INTO transactions (account_id, operation, kind, status, external_id,
                                          amount, fee, end_to_end_id, pix_key, counterpart,
                                          created_at, processed_at)
                SELECT $1, $2, 'test', $3, $4 || '-' || g, $5, $6,
                       'E12345678' || to_char($7::timestamptz - g * $8::interval,
                                              'YYYYMMDDHH24MI')
                       || substr(md5(random()::text || g), 1, 11),
                       $9, $10::jsonb, $7::timestamptz - g * $8::interval,
                       $7::timestamptz - g * $8::interval + interval '1 second'
                FROM generate_series(0, $11 - 1) AS g
                RETURNING id, account_id, operation, status, amount, created_at
                ),
                counted AS (
                    INSERT INTO limit_usage AS u (account_id, bucket, used)
                    SELECT account_id,
                           limit_bucket(created_at),
                           sum(amount)
                    FROM made WHERE operation = 'WITHDRAW' AND status <> 'ERROR'
                    GROUP BY 1, 2
                    ON CONFLICT (account_id, bucket) DO UPDATE SET used = u.used + EXCLUDED.used
                )
                SELECT id FROM made ORDER BY id
                """,
                account_id,
                operation,
                status,
                f"{prefix}-{account_id}",
                amount,
                fee,
                newest,
                step,
                pix_key,
                extra.get("counterpart", COUNTERPART),
                count,
            )
        ]
    return ids


async def count_sent(conn: Connection, account_id: int, amount: int, at: datetime) -> None:
    """Count a hand-made outgoing row in the limits' usage, as a payment's hold does."""
    await conn.execute("SELECT limit_count($1, $2, $3, $2, NULL)", account_id, at, amount)
