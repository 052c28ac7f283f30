"""Sandbox settling bank: the simulated DICT directory (reserved slot).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from pixgate.db.migrate import execute_script

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("SELECT 1")


def downgrade() -> None:
    execute_script("SELECT 1")
