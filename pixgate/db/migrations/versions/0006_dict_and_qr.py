"""dict and qr (reserved slot; filled by the issue that needs it).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from pixgate.db.migrate import execute_script

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script("SELECT 1")


def downgrade() -> None:
    execute_script("SELECT 1")
