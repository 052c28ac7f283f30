"""Foundation: accounts, credentials, certificates, server keys, ledger, transactions, jobs, events.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from pixgate.core.db.migrate import execute_script

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE server_keys (
            name        text PRIMARY KEY,
            value       text NOT NULL,
            created_at  timestamptz NOT NULL DEFAULT now()
        );

        CREATE TABLE accounts (
            id                      bigserial PRIMARY KEY,
            name                    text NOT NULL,
            document                text,
            available               bigint NOT NULL DEFAULT 0,
            blocked                 bigint NOT NULL DEFAULT 0,
            transaction_limit       bigint,
            daily_limit             bigint,
            night_limit             bigint,
            fees                    jsonb NOT NULL DEFAULT '{}'::jsonb,
            split_frequency         text NOT NULL DEFAULT 'immediate',
            created_at              timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT ck_accounts_available_not_negative CHECK (available >= 0),
            CONSTRAINT ck_accounts_blocked_not_negative CHECK (blocked >= 0),
            CONSTRAINT ck_accounts_split_frequency
                CHECK (split_frequency IN ('immediate', 'hourly', 'daily'))
        );

        CREATE TABLE credentials (
            client_id    uuid PRIMARY KEY,
            account_id   bigint NOT NULL REFERENCES accounts (id),
            secret_hash  bytea NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            revoked_at   timestamptz
        );
        CREATE INDEX ix_credentials_account_id ON credentials (account_id);

        CREATE TABLE certificates (
            fingerprint  text PRIMARY KEY,
            account_id   bigint NOT NULL REFERENCES accounts (id),
            pem          text NOT NULL,
            subject      text NOT NULL,
            not_before   timestamptz NOT NULL,
            not_after    timestamptz NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            revoked_at   timestamptz,
            CONSTRAINT ck_certificates_fingerprint CHECK (fingerprint ~ '^[0-9a-f]{64}$')
        );
        CREATE INDEX ix_certificates_account_id ON certificates (account_id);

        -- Every movement of money: rows of one entry sum to zero. `book` is 'available' or
        -- 'blocked' for a customer account (account_id set), or a system book
        -- ('settlement', 'fees', 'sandbox_funding') with account_id NULL.
        CREATE SEQUENCE ledger_entry_seq;
        CREATE TABLE ledger_postings (
            id              bigserial PRIMARY KEY,
            entry_id        bigint NOT NULL,
            account_id      bigint REFERENCES accounts (id),
            book            text NOT NULL,
            amount          bigint NOT NULL,
            transaction_id  bigint,
            memo            text NOT NULL,
            created_at      timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT ck_ledger_postings_book CHECK (
                (account_id IS NOT NULL AND book IN ('available', 'blocked'))
                OR (account_id IS NULL AND book IN ('settlement', 'fees', 'sandbox_funding'))
            )
        );
        CREATE INDEX ix_ledger_postings_entry_id ON ledger_postings (entry_id);
        CREATE INDEX ix_ledger_postings_account_id ON ledger_postings (account_id, book);
        CREATE INDEX ix_ledger_postings_transaction_id ON ledger_postings (transaction_id);

        -- One row per money movement the integrator sees (2.6). `id` is the numeric id,
        -- `transaction_id` the public UUID.
        CREATE TABLE transactions (
            id               bigserial PRIMARY KEY,
            transaction_id   uuid NOT NULL DEFAULT gen_random_uuid(),
            account_id       bigint NOT NULL REFERENCES accounts (id),
            operation        text NOT NULL,
            kind             text NOT NULL,
            status           text NOT NULL DEFAULT 'PENDING',
            external_id      text,
            idempotency_key  uuid,
            amount           bigint NOT NULL,
            fee              bigint NOT NULL DEFAULT 0,
            end_to_end_id    text,
            pix_key          text,
            pix_key_type     text,
            description      text,
            counterpart      jsonb,
            details          jsonb NOT NULL DEFAULT '{}'::jsonb,
            error_code       text,
            error_message    text,
            parent_id        bigint REFERENCES transactions (id),
            created_at       timestamptz NOT NULL DEFAULT now(),
            processed_at     timestamptz,
            CONSTRAINT uq_transactions_transaction_id UNIQUE (transaction_id),
            CONSTRAINT uq_transactions_account_external_id UNIQUE (account_id, external_id),
            CONSTRAINT uq_transactions_account_idempotency_key UNIQUE (account_id, idempotency_key),
            CONSTRAINT uq_transactions_end_to_end_id UNIQUE (end_to_end_id),
            CONSTRAINT ck_transactions_operation
                CHECK (operation IN ('PAYMENT', 'WITHDRAW', 'REFUND_IN', 'REFUND_OUT')),
            CONSTRAINT ck_transactions_status CHECK (status IN ('PENDING', 'CONFIRMED', 'ERROR')),
            CONSTRAINT ck_transactions_amount_positive CHECK (amount > 0),
            CONSTRAINT ck_transactions_fee_not_negative CHECK (fee >= 0)
        );
        CREATE INDEX ix_transactions_account_created
            ON transactions (account_id, created_at DESC, id DESC);
        ALTER TABLE ledger_postings ADD CONSTRAINT fk_ledger_postings_transaction_id
            FOREIGN KEY (transaction_id) REFERENCES transactions (id);

        -- Durable jobs: written in the same transaction as the state change (outbox),
        -- claimed with FOR UPDATE SKIP LOCKED, retaken when a worker's lease expires.
        CREATE TABLE jobs (
            id            bigserial PRIMARY KEY,
            kind          text NOT NULL,
            args          jsonb NOT NULL,
            status        text NOT NULL DEFAULT 'queued',
            run_at        timestamptz NOT NULL DEFAULT now(),
            attempts      integer NOT NULL DEFAULT 0,
            max_attempts  integer NOT NULL DEFAULT 25,
            locked_by     text,
            locked_until  timestamptz,
            last_error    text,
            created_at    timestamptz NOT NULL DEFAULT now(),
            finished_at   timestamptz,
            CONSTRAINT ck_jobs_status CHECK (status IN ('queued', 'running', 'done', 'failed'))
        );
        CREATE INDEX ix_jobs_queued_run_at ON jobs (run_at) WHERE status = 'queued';
        CREATE INDEX ix_jobs_running_locked_until ON jobs (locked_until) WHERE status = 'running';

        -- Events (the outbox of webhooks): facts frozen at the moment of the state change.
        CREATE TABLE events (
            id              bigserial PRIMARY KEY,
            event_id        uuid NOT NULL DEFAULT gen_random_uuid(),
            account_id      bigint NOT NULL REFERENCES accounts (id),
            type            text NOT NULL,
            transaction_id  bigint REFERENCES transactions (id),
            data            jsonb NOT NULL,
            created_at      timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT uq_events_event_id UNIQUE (event_id),
            CONSTRAINT ck_events_type CHECK (type IN (
                'cash_in', 'cash_out', 'refund_in', 'refund_out',
                'med_created', 'med_accepted', 'med_rejected'
            ))
        );
        CREATE INDEX ix_events_account_created ON events (account_id, created_at DESC, id DESC);
        CREATE INDEX ix_events_transaction_id ON events (transaction_id);
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP TABLE events;
        DROP TABLE jobs;
        ALTER TABLE ledger_postings DROP CONSTRAINT fk_ledger_postings_transaction_id;
        DROP TABLE transactions;
        DROP TABLE ledger_postings;
        DROP SEQUENCE ledger_entry_seq;
        DROP TABLE certificates;
        DROP TABLE credentials;
        DROP TABLE accounts;
        DROP TABLE server_keys;
        """
    )
