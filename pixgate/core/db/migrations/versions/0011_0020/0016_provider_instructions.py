"""`provider_instructions`: what a request told the provider, kept with its payout.

The sandbox's scenario of a payout settled later used to ride in `transactions.details`
(key `scenario`), where every reader of a transaction saw it. It moves here, keyed by the
transaction, and leaves `details`.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25
"""

from pixgate.core.db.migrate import execute_script

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE provider_instructions (
            transaction_id  bigint PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
            value           text NOT NULL
        );
        INSERT INTO provider_instructions (transaction_id, value)
            SELECT id, details ->> 'scenario' FROM transactions
            WHERE details ->> 'scenario' IS NOT NULL;
        UPDATE transactions SET details = details - 'scenario' WHERE details ? 'scenario';
        """
    )


def downgrade() -> None:
    execute_script(
        """
        UPDATE transactions t
            SET details = t.details || jsonb_build_object('scenario', p.value)
            FROM provider_instructions p WHERE p.transaction_id = t.id;
        DROP TABLE provider_instructions;
        """
    )
