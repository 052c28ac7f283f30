"""MED cases: the Central Bank's special return mechanism, opened against a received PIX.

A case names the original PIX by its end-to-end id; `original_transaction_id` is set when
that id is one of the account's received payments (the case is then reconciled). While the
case is under analysis its disputed amount, up to the available balance, is held
(`blocked_amount`); an approved case returns it to the payer as a refund
(`refund_transaction_id`).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""

from pixgate.core.db.migrate import execute_script

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE med_cases (
            id                       bigserial PRIMARY KEY,
            account_id               bigint NOT NULL REFERENCES accounts (id),
            end_to_end_id            text NOT NULL,
            status                   text NOT NULL,
            reason                   text NOT NULL,
            cause                    text,
            description              text,
            analysis_result          text,
            analysis_details         text,
            requesting_bank          jsonb NOT NULL,
            contested_bank           jsonb NOT NULL,
            original_transaction_id  bigint REFERENCES transactions (id),
            blocked_amount           bigint NOT NULL DEFAULT 0,
            refund_transaction_id    bigint REFERENCES transactions (id),
            created_at               timestamptz NOT NULL,
            updated_at               timestamptz NOT NULL,
            CONSTRAINT ck_med_cases_status
                CHECK (status IN ('OPEN', 'RECEIVED', 'CANCELLED', 'ANALYZED')),
            CONSTRAINT ck_med_cases_reason
                CHECK (reason IN ('REFUND_REQUEST', 'REFUND_CANCELLATION')),
            CONSTRAINT ck_med_cases_analysis_result
                CHECK (analysis_result IN ('APPROVED', 'REJECTED')),
            CONSTRAINT ck_med_cases_blocked_amount CHECK (blocked_amount >= 0)
        );
        CREATE INDEX ix_med_cases_account_created
            ON med_cases (account_id, created_at DESC, id DESC);
        CREATE INDEX ix_med_cases_original ON med_cases (original_transaction_id)
            WHERE original_transaction_id IS NOT NULL;
        -- one case under analysis per PIX: a second request waits for the first to end
        CREATE UNIQUE INDEX uq_med_cases_open_end_to_end_id
            ON med_cases (account_id, end_to_end_id) WHERE status IN ('OPEN', 'RECEIVED');
        """
    )


def downgrade() -> None:
    execute_script("DROP TABLE med_cases;")
