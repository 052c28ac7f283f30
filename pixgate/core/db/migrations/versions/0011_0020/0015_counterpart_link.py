"""Counterpart link: where a transaction's money came from or went, as typed columns.

`counterpart_ispb` is the counterpart's institution; `counterpart_account_id` names our own
account when the other side of the PIX banks with this gateway (an internal transfer). The
refund of an internal PIX is recognised by that id (`refund_twin()`,
`pixgate/refunds/sql/050_refunds.sql`), never by parsing the `counterpart` document, which stays
for the wire. The index finds the other side of an internal PIX: the row of the named
account with the same end-to-end id.

Existing rows are filled from their document as the twin lookup read it before: the ISPB
as written, and the account when the ISPB is this gateway's (`PIXGATE_ISPB`, the setting
the gateway runs with) and the account number is the id of an existing account.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from pixgate.core.db.migrate import execute_script
from pixgate.core.settings import Settings

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_BACKFILL = """
    UPDATE transactions t
    SET counterpart_ispb = t.counterpart -> 'bank' ->> 'bankISPB',
        counterpart_account_id = (
            SELECT a.id FROM accounts a
            WHERE t.counterpart -> 'bank' ->> 'bankISPB' = :ispb
              AND a.id = CASE  -- cast only a valid number
                  WHEN t.counterpart -> 'bank' ->> 'accountNumber' ~ '^[1-9][0-9]{0,17}$'
                  THEN (t.counterpart -> 'bank' ->> 'accountNumber')::bigint END)
    WHERE t.counterpart IS NOT NULL
"""


def upgrade() -> None:
    execute_script(
        """
        ALTER TABLE transactions
            ADD COLUMN counterpart_ispb text,
            ADD COLUMN counterpart_account_id bigint REFERENCES accounts (id);
        """
    )
    op.execute(sa.text(_BACKFILL).bindparams(ispb=Settings().ispb))
    execute_script(
        """
        ALTER TABLE transactions ADD CONSTRAINT ck_transactions_counterpart_link
            CHECK (counterpart_account_id IS NULL OR counterpart_ispb IS NOT NULL);
        CREATE INDEX ix_transactions_counterpart_account
            ON transactions (counterpart_account_id, end_to_end_id)
            WHERE counterpart_account_id IS NOT NULL;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        ALTER TABLE transactions
            DROP COLUMN counterpart_account_id,
            DROP COLUMN counterpart_ispb;
        """
    )
