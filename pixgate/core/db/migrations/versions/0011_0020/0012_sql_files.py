"""`sql_files`: which version of each database-function file is applied.

The functions of the money rules live in `pixgate/*/sql/*.sql`, re-applied by
`pixgate db upgrade` whenever a file changes (`pixgate.core.db.sql_files`); this table records
each file's checksum.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from pixgate.core.db.migrate import execute_script

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE sql_files (
            name        text PRIMARY KEY,
            checksum    text NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now()
        );
        """
    )


def downgrade() -> None:
    execute_script("DROP TABLE sql_files;")
