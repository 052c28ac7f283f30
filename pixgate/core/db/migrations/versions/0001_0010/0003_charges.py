"""Charges: cash-in charges and Central-Bank cobs, each with a location and a PAYMENT transaction.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from pixgate.core.db.migrate import execute_script

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- A charge is what a payer pays: `kind` cash_in (4.3) or cob (4.14). Its PAYMENT
        -- transaction is created PENDING with the charge and confirmed when it is paid.
        -- `status` holds the charge's own vocabulary: cash_in PENDING/CONFIRMED/EXPIRED;
        -- cob ATIVA/CONCLUIDA/REMOVIDA_PELO_USUARIO_RECEBEDOR/REMOVIDA_PELO_PSP.
        CREATE TABLE charges (
            id               bigserial PRIMARY KEY,
            account_id       bigint NOT NULL REFERENCES accounts (id),
            kind             text NOT NULL,
            transaction_id   bigint NOT NULL REFERENCES transactions (id),
            txid             text NOT NULL,
            location_token   text NOT NULL,
            pix_code         text NOT NULL,
            amount           bigint,
            status           text NOT NULL,
            expires_at       timestamptz NOT NULL,
            revision         integer NOT NULL DEFAULT 0,
            body             jsonb NOT NULL DEFAULT '{}'::jsonb,
            created_at       timestamptz NOT NULL DEFAULT now(),
            updated_at       timestamptz NOT NULL DEFAULT now(),
            paid_at          timestamptz,
            CONSTRAINT ck_charges_kind CHECK (kind IN ('cash_in', 'cob')),
            CONSTRAINT uq_charges_transaction_id UNIQUE (transaction_id),
            CONSTRAINT uq_charges_account_txid UNIQUE (account_id, txid),
            CONSTRAINT uq_charges_location_token UNIQUE (location_token)
        );
        CREATE INDEX ix_charges_open_expires_at ON charges (expires_at)
            WHERE status IN ('PENDING', 'ATIVA');

        -- Split recipients of a cash-in charge, paid out when the charge is paid.
        CREATE TABLE charge_splits (
            id                bigserial PRIMARY KEY,
            charge_id         bigint NOT NULL REFERENCES charges (id),
            position          integer NOT NULL,
            pix_key           text NOT NULL,
            pix_key_type      text NOT NULL,
            name              text NOT NULL,
            document          text NOT NULL,
            split_type        text NOT NULL,
            value             numeric(20, 4) NOT NULL,
            immediate         boolean NOT NULL DEFAULT false,
            amount            bigint,
            payout_id         bigint REFERENCES transactions (id),
            CONSTRAINT ck_charge_splits_type CHECK (split_type IN ('FIXED', 'PERCENTAGE')),
            CONSTRAINT uq_charge_splits_position UNIQUE (charge_id, position)
        );

        -- Splits are computed when the charge is paid (`amount`) and paid out when due
        -- (`due_at`: at once, or the account's next hourly/daily boundary); `payout_id` is
        -- the WITHDRAW that pays one out, so a split is paid at most once.
        ALTER TABLE charge_splits ADD COLUMN due_at timestamptz;
        ALTER TABLE charge_splits ADD CONSTRAINT uq_charge_splits_payout_id UNIQUE (payout_id);
        CREATE INDEX ix_charge_splits_due ON charge_splits (due_at)
            WHERE payout_id IS NULL AND due_at IS NOT NULL;

        -- One `splits.run_due` job per account and boundary, however many payments fall
        -- before it: the job is enqueued only by the transaction that inserts this row.
        CREATE TABLE split_runs (
            account_id  bigint NOT NULL REFERENCES accounts (id),
            run_at      timestamptz NOT NULL,
            CONSTRAINT pk_split_runs PRIMARY KEY (account_id, run_at)
        );

        -- A PIX between two accounts of this gateway (QR cash-out of our own charge) is one
        -- payment with one end-to-end id, seen by both sides: unique per account.
        ALTER TABLE transactions DROP CONSTRAINT uq_transactions_end_to_end_id;
        ALTER TABLE transactions ADD CONSTRAINT uq_transactions_account_end_to_end_id
            UNIQUE (account_id, end_to_end_id);
        """
    )


def downgrade() -> None:
    execute_script(
        """
        ALTER TABLE transactions DROP CONSTRAINT uq_transactions_account_end_to_end_id;
        ALTER TABLE transactions ADD CONSTRAINT uq_transactions_end_to_end_id
            UNIQUE (end_to_end_id);
        DROP TABLE split_runs;
        DROP TABLE charge_splits;
        DROP TABLE charges;
        """
    )
