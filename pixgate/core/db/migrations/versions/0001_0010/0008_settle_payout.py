"""`record_event()` and `settle_payout()`: a payout's settlement in one round trip.

These functions are not defined here any more: they live, with every other money rule, in
`pixgate/*/sql/*.sql`, which `pixgate db upgrade` applies after the migrations whenever a
file changes (`pixgate.core.db.sql_files`). A database that ran this migration before keeps the
old version until then; one migrated now gets the functions from the files.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing: the functions come from `pixgate/*/sql/`."""


def downgrade() -> None:
    """Nothing: the functions belong to `pixgate/*/sql/`."""
