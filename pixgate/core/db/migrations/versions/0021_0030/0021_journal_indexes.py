"""The journal keeps only the indexes something reads: its primary key and the postings of a
transaction. The indexes by entry and by account and book were read by nothing but `pixgate
ledger verify`, whose checks sum every posting of the table in one pass (a hash aggregate
that an index does not help), while every payment wrote five postings into each of them.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-30
"""

from pixgate.core.db.migrate import execute_script

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("DROP INDEX ix_ledger_postings_entry_id, ix_ledger_postings_account_id;")


def downgrade() -> None:
    execute_script(
        """
        CREATE INDEX ix_ledger_postings_entry_id ON ledger_postings (entry_id);
        CREATE INDEX ix_ledger_postings_account_id ON ledger_postings (account_id, book);
        """
    )
