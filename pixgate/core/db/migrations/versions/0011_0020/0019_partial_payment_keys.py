"""A payment's idempotency key and end-to-end id are unique per account only where they are
set: partial unique indexes in place of the two unique constraints.

Most payments have no idempotency key (only DICT transfers take one), and a cash-out has no
end-to-end id until it settles; the full constraints kept an index entry for each of those
NULLs, written again by the settlement's update. Every lookup by either column names a
value, which the partial index serves. Building an index locks `transactions` against
writes while it runs.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from pixgate.core.db.migrate import execute_script

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        ALTER TABLE transactions
            DROP CONSTRAINT uq_transactions_account_idempotency_key,
            DROP CONSTRAINT uq_transactions_account_end_to_end_id;
        CREATE UNIQUE INDEX uq_transactions_account_idempotency_key
            ON transactions (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
        CREATE UNIQUE INDEX uq_transactions_account_end_to_end_id
            ON transactions (account_id, end_to_end_id) WHERE end_to_end_id IS NOT NULL;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP INDEX uq_transactions_account_idempotency_key, uq_transactions_account_end_to_end_id;
        ALTER TABLE transactions
            ADD CONSTRAINT uq_transactions_account_idempotency_key
                UNIQUE (account_id, idempotency_key),
            ADD CONSTRAINT uq_transactions_account_end_to_end_id
                UNIQUE (account_id, end_to_end_id);
        """
    )
