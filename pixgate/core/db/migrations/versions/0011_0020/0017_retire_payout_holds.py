"""Retire the database functions `payout_accept()` replaces.

Every payout is now accepted by `payout_accept()` (`pixgate/payouts/sql/040_payouts.sql`):
`payout_hold()` is gone, and `hold_payout()`, `hold_payouts()` and `refund_hold()` are
`payout_create()`, `payouts_create()` and `refund_create()`. A function file drops only the
functions it defines, so the retired names are dropped here, once; `pixgate db upgrade` then
applies the changed files.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25
"""

from pixgate.core.db.migrate import execute_script

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("DROP FUNCTION IF EXISTS payout_hold, hold_payout, hold_payouts, refund_hold;")


def downgrade() -> None:
    """Nothing: the functions of a release come from its own `sql/` files, which its
    `pixgate db upgrade` applies (their checksums differ from the ones recorded here)."""
