"""The rows every payment writes name their account and transaction without foreign keys:
the functions that write them have just locked or written what they name, and `pixgate
ledger verify` checks every reference.

A cash-out wrote about twelve such references (its transaction row, the hold's and the
settlement's postings, its event, its limit count), and PostgreSQL checked each with a query
of its own at the end of the statement, which took a key-share lock on the account's row:
on one hot account, each of those locks met a settlement's update of the same row and
created a multixact. Every writer reaches these tables through a SQL function that first
updates the account's row (and raises when it is missing), or has just inserted or updated
the transaction it names, in the same database transaction; accounts and transactions are
never deleted. The checks the foreign keys made are in `pixgate.ledger.queries.checks`.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

from pixgate.core.db.migrate import execute_script

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        ALTER TABLE ledger_postings
            DROP CONSTRAINT ledger_postings_account_id_fkey,
            DROP CONSTRAINT fk_ledger_postings_transaction_id;
        ALTER TABLE events
            DROP CONSTRAINT events_account_id_fkey,
            DROP CONSTRAINT events_transaction_id_fkey;
        ALTER TABLE transactions DROP CONSTRAINT transactions_account_id_fkey;
        ALTER TABLE limit_usage DROP CONSTRAINT limit_usage_account_id_fkey;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        ALTER TABLE ledger_postings
            ADD CONSTRAINT ledger_postings_account_id_fkey
                FOREIGN KEY (account_id) REFERENCES accounts (id),
            ADD CONSTRAINT fk_ledger_postings_transaction_id
                FOREIGN KEY (transaction_id) REFERENCES transactions (id);
        ALTER TABLE events
            ADD CONSTRAINT events_account_id_fkey
                FOREIGN KEY (account_id) REFERENCES accounts (id),
            ADD CONSTRAINT events_transaction_id_fkey
                FOREIGN KEY (transaction_id) REFERENCES transactions (id);
        ALTER TABLE transactions ADD CONSTRAINT transactions_account_id_fkey
            FOREIGN KEY (account_id) REFERENCES accounts (id);
        ALTER TABLE limit_usage ADD CONSTRAINT limit_usage_account_id_fkey
            FOREIGN KEY (account_id) REFERENCES accounts (id);
        """
    )
