"""Refunds: the refunds of a transaction found by its id.

A refund (REFUND_IN of a received PIX, REFUND_OUT of a cash-out) names its original in
`parent_id`; every refund request counts the original's refunds (`refund_fits()`,
`pixgate/refunds/sql/050_refunds.sql`) while it holds the original's lock, so that count reads
an index instead of the account's transactions.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""

from pixgate.core.db.migrate import execute_script

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE INDEX ix_transactions_parent_id ON transactions (parent_id)
            WHERE parent_id IS NOT NULL;
        """
    )


def downgrade() -> None:
    execute_script("DROP INDEX ix_transactions_parent_id;")
