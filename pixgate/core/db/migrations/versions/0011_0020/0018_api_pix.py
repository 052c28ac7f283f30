"""The Central Bank's API Pix: accounts' PIX keys, locations, cob revisions, credentials
that authenticate by certificate alone.

- `account_keys`: the PIX keys that receive into an account (the DICT entries the gateway
  holds for its own accounts). Every account gets a random (EVP) key; existing ones here.
- `locations`: the payload locations of the API Pix (`POST /loc`), each with the unguessable
  token of its public URL and, while linked, the charge it serves. A cob made before keeps
  its token at a location of its own; a cob's `location_token` is its location's, so only
  cash-in charges' tokens stay unique among charges.
- `charge_revisions`: every revision of a cob (`GET /cob/{txid}?revisao=n`), the current one
  included; existing cobs get their current revision here.
- `ix_transactions_account_received`: an account's received PIX by when they were credited
  (`GET /pix`).
- `credentials.auth_method`: `client_secret` (the spec's) or `tls_client_auth` (RFC 8705
  section 2.1: the clientId and its registered certificate, no secret).
- `webhook_endpoints.pix_key`: the Central Bank's webhook by key (`PUT /webhook/{chave}`), a
  row of version `api_pix` with the key it serves and no event type (one per key); its
  deliveries are of version `api_pix` too.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from pixgate.core.db.migrate import execute_script

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE TABLE account_keys (
            key         text PRIMARY KEY,
            key_type    text NOT NULL,
            account_id  bigint NOT NULL REFERENCES accounts (id),
            created_at  timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT ck_account_keys_type
                CHECK (key_type IN ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'))
        );
        CREATE INDEX ix_account_keys_account ON account_keys (account_id, created_at);
        INSERT INTO account_keys (key, key_type, account_id, created_at)
        SELECT gen_random_uuid()::text, 'EVP', id, created_at FROM accounts;

        CREATE TABLE locations (
            id          bigserial PRIMARY KEY,
            account_id  bigint NOT NULL REFERENCES accounts (id),
            token       text NOT NULL,
            tipo_cob    text NOT NULL DEFAULT 'cob',
            charge_id   bigint REFERENCES charges (id),
            created_at  timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT uq_locations_token UNIQUE (token),
            CONSTRAINT uq_locations_charge UNIQUE (charge_id),
            CONSTRAINT ck_locations_tipo_cob CHECK (tipo_cob IN ('cob', 'cobv'))
        );
        CREATE INDEX ix_locations_account_created ON locations (account_id, created_at);
        INSERT INTO locations (account_id, token, tipo_cob, charge_id, created_at)
        SELECT account_id, location_token, 'cob', id, created_at
        FROM charges WHERE kind = 'cob' ORDER BY id;
        -- A cob's token is its location's: a location serves one cob after another, so
        -- only a cash-in charge's token stays unique among charges.
        ALTER TABLE charges DROP CONSTRAINT uq_charges_location_token;
        CREATE UNIQUE INDEX uq_charges_location_token ON charges (location_token)
            WHERE kind <> 'cob';

        CREATE TABLE charge_revisions (
            charge_id   bigint NOT NULL REFERENCES charges (id),
            revision    integer NOT NULL,
            status      text NOT NULL,
            amount      bigint,
            expires_at  timestamptz NOT NULL,
            body        jsonb NOT NULL,
            created_at  timestamptz NOT NULL,
            PRIMARY KEY (charge_id, revision)
        );
        INSERT INTO charge_revisions
            (charge_id, revision, status, amount, expires_at, body, created_at)
        SELECT id, revision, status, amount, expires_at, body, updated_at
        FROM charges WHERE kind = 'cob';
        CREATE INDEX ix_charges_account_kind_created ON charges (account_id, kind, created_at);
        -- GET /pix: an account's received PIX in the order they were credited.
        CREATE INDEX ix_transactions_account_received
            ON transactions (account_id, processed_at, id)
            WHERE operation = 'PAYMENT' AND status = 'CONFIRMED';

        ALTER TABLE credentials
            ADD COLUMN auth_method text NOT NULL DEFAULT 'client_secret',
            ALTER COLUMN secret_hash DROP NOT NULL,
            ADD CONSTRAINT ck_credentials_auth_method
                CHECK (auth_method IN ('client_secret', 'tls_client_auth')),
            ADD CONSTRAINT ck_credentials_secret
                CHECK ((auth_method = 'client_secret') = (secret_hash IS NOT NULL));

        ALTER TABLE webhook_endpoints
            ADD COLUMN pix_key text,
            ALTER COLUMN event_type DROP NOT NULL,
            DROP CONSTRAINT ck_webhook_endpoints_version,
            ADD CONSTRAINT ck_webhook_endpoints_version
                CHECK (version IN ('v1', 'v2', 'api_pix')),
            ADD CONSTRAINT ck_webhook_endpoints_api_pix CHECK (
                (version = 'api_pix') = (pix_key IS NOT NULL)
                AND (version = 'api_pix') = (event_type IS NULL)),
            ADD CONSTRAINT uq_webhook_endpoints_pix_key UNIQUE (pix_key);
        ALTER TABLE webhook_deliveries
            DROP CONSTRAINT ck_webhook_deliveries_version,
            ADD CONSTRAINT ck_webhook_deliveries_version
                CHECK (version IN ('v1', 'v2', 'api_pix'));
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DELETE FROM webhook_attempts WHERE delivery_id IN
            (SELECT id FROM webhook_deliveries WHERE version = 'api_pix');
        DELETE FROM webhook_deliveries WHERE version = 'api_pix';
        DELETE FROM webhook_endpoints WHERE version = 'api_pix';
        ALTER TABLE webhook_deliveries
            DROP CONSTRAINT ck_webhook_deliveries_version,
            ADD CONSTRAINT ck_webhook_deliveries_version CHECK (version IN ('v1', 'v2'));
        ALTER TABLE webhook_endpoints
            DROP CONSTRAINT uq_webhook_endpoints_pix_key,
            DROP CONSTRAINT ck_webhook_endpoints_api_pix,
            DROP CONSTRAINT ck_webhook_endpoints_version,
            ADD CONSTRAINT ck_webhook_endpoints_version CHECK (version IN ('v1', 'v2')),
            ALTER COLUMN event_type SET NOT NULL,
            DROP COLUMN pix_key;
        DELETE FROM credentials WHERE auth_method = 'tls_client_auth';
        ALTER TABLE credentials
            DROP CONSTRAINT ck_credentials_secret,
            DROP CONSTRAINT ck_credentials_auth_method,
            DROP COLUMN auth_method,
            ALTER COLUMN secret_hash SET NOT NULL;
        DROP INDEX ix_transactions_account_received;
        DROP INDEX ix_charges_account_kind_created;
        DROP TABLE charge_revisions;
        DROP TABLE locations;
        DROP INDEX uq_charges_location_token;
        ALTER TABLE charges
            ADD CONSTRAINT uq_charges_location_token UNIQUE (location_token);
        DROP TABLE account_keys;
        """
    )
