"""Revoked credentials and certificates by time: every API process reads the recent ones.

Each API process re-reads, about once a second, what was revoked within a token's
lifetime (`accounts.service.auth.watch_revocations`); partial indexes keep that read proportional
to the revocations, not to every credential and certificate ever issued.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from pixgate.core.db.migrate import execute_script

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE INDEX ix_credentials_revoked_at ON credentials (revoked_at)
            WHERE revoked_at IS NOT NULL;
        CREATE INDEX ix_certificates_revoked_at ON certificates (revoked_at)
            WHERE revoked_at IS NOT NULL;
        """
    )


def downgrade() -> None:
    execute_script("DROP INDEX ix_credentials_revoked_at; DROP INDEX ix_certificates_revoked_at;")
