"""Outgoing volume per account and quarter-hour, so a limit check reads a few rows.

Summing the day's transactions made every cash-out cost O(payouts today) while it held the
account row; these buckets make it O(buckets in the window): at most 96 for a day.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from pixgate.core.db.migrate import execute_script

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE limit_usage (
            account_id bigint      NOT NULL REFERENCES accounts (id),
            bucket     timestamptz NOT NULL,
            used       bigint      NOT NULL,
            PRIMARY KEY (account_id, bucket),
            CONSTRAINT ck_limit_usage_used_not_negative CHECK (used >= 0)
        );
        INSERT INTO limit_usage (account_id, bucket, used)
        SELECT account_id, to_timestamp(floor(extract(epoch FROM created_at) / 900) * 900),
               sum(amount)
        FROM transactions
        WHERE operation = 'WITHDRAW' AND status <> 'ERROR'
        GROUP BY 1, 2;
        """
    )


def downgrade() -> None:
    execute_script("DROP TABLE limit_usage")
