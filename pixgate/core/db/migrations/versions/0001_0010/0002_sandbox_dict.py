"""Sandbox settling bank: the simulated DICT directory.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from pixgate.core.db.migrate import execute_script

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- Keys registered in the sandbox's DICT. `key` is the normalized spelling.
        CREATE TABLE sandbox_dict_keys (
            key             text PRIMARY KEY,
            key_type        text NOT NULL,
            name            text NOT NULL,
            document        text NOT NULL,
            ispb            text NOT NULL,
            bank_name       text NOT NULL,
            bank_code       text NOT NULL,
            branch          text NOT NULL,
            account_number  text NOT NULL,
            status          text NOT NULL DEFAULT 'ACTIVE',
            account_id      bigint REFERENCES accounts (id),
            created_at      timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT ck_sandbox_dict_keys_status
                CHECK (status IN ('ACTIVE', 'BLOCKED', 'CLOSED')),
            CONSTRAINT ck_sandbox_dict_keys_ispb CHECK (ispb ~ '^[0-9]{8}$')
        );
        """
    )


def downgrade() -> None:
    execute_script("DROP TABLE sandbox_dict_keys;")
