"""Indexes of the transaction lists: the statement, its filters, lookups by key and by id.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from pixgate.core.db.migrate import execute_script

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- The statement's order, covering the filters so a page and its count are found on
        -- the index alone (index-only scans once the visibility map is set).
        DROP INDEX ix_transactions_account_created;
        CREATE INDEX ix_transactions_account_created
            ON transactions (account_id, created_at DESC, id DESC) INCLUDE (status, operation);
        CREATE INDEX ix_transactions_account_status_created
            ON transactions (account_id, status, created_at DESC, id DESC);
        CREATE INDEX ix_transactions_account_operation_created
            ON transactions (account_id, operation, created_at DESC, id DESC);
        CREATE INDEX ix_transactions_account_pix_key_created
            ON transactions (account_id, pix_key, created_at DESC, id DESC)
            WHERE pix_key IS NOT NULL;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP INDEX ix_transactions_account_pix_key_created;
        DROP INDEX ix_transactions_account_operation_created;
        DROP INDEX ix_transactions_account_status_created;
        DROP INDEX ix_transactions_account_created;
        CREATE INDEX ix_transactions_account_created
            ON transactions (account_id, created_at DESC, id DESC);
        """
    )
