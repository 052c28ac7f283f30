"""Webhooks: endpoints per event type, signing secrets, deliveries (per event and URL), attempts.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from pixgate.core.db.migrate import execute_script

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        -- A URL that receives one event type of one account (4.9, 2.12). The same URL for the
        -- same event is one row: registering it again updates its headers and version.
        CREATE TABLE webhook_endpoints (
            id          bigserial PRIMARY KEY,
            account_id  bigint NOT NULL REFERENCES accounts (id),
            event_type  text NOT NULL,
            url         text NOT NULL,
            headers     jsonb NOT NULL DEFAULT '{}'::jsonb,
            version     text NOT NULL DEFAULT 'v1',
            is_active   boolean NOT NULL DEFAULT true,
            created_at  timestamptz NOT NULL DEFAULT now(),
            updated_at  timestamptz NOT NULL DEFAULT now(),
            CONSTRAINT uq_webhook_endpoints_account_event_url UNIQUE (account_id, event_type, url),
            CONSTRAINT ck_webhook_endpoints_version CHECK (version IN ('v1', 'v2')),
            CONSTRAINT ck_webhook_endpoints_event_type CHECK (event_type IN (
                'cash_in', 'cash_out', 'refund_in', 'refund_out',
                'med_created', 'med_accepted', 'med_rejected'
            ))
        );
        CREATE INDEX ix_webhook_endpoints_fanout ON webhook_endpoints (account_id, event_type)
            WHERE is_active;

        -- The account's signing secrets (Standard Webhooks `whsec_...`). The current one has
        -- expires_at NULL; a rotated-out one keeps signing until expires_at (overlap window).
        -- revealed_at: the secret is shown once, then only a rotation shows a new one.
        CREATE TABLE webhook_secrets (
            id           bigserial PRIMARY KEY,
            account_id   bigint NOT NULL REFERENCES accounts (id),
            secret       text NOT NULL,
            created_at   timestamptz NOT NULL DEFAULT now(),
            revealed_at  timestamptz,
            expires_at   timestamptz,
            CONSTRAINT ck_webhook_secrets_format CHECK (secret LIKE 'whsec\\_%')
        );
        CREATE UNIQUE INDEX uq_webhook_secrets_current ON webhook_secrets (account_id)
            WHERE expires_at IS NULL;
        CREATE INDEX ix_webhook_secrets_account_id ON webhook_secrets (account_id, id DESC);

        -- One message to one URL: created with the event (same transaction) for each active
        -- endpoint, or by a resend to a temporary URL (temporary, endpoint_id NULL; not counted
        -- in an event's delivery state). message_id is the
        -- Standard Webhooks `webhook-id`, stable across retries.
        CREATE TABLE webhook_deliveries (
            id               bigserial PRIMARY KEY,
            event_id         bigint NOT NULL REFERENCES events (id),
            account_id       bigint NOT NULL REFERENCES accounts (id),
            endpoint_id      bigint REFERENCES webhook_endpoints (id) ON DELETE SET NULL,
            url              text NOT NULL,
            version          text NOT NULL,
            message_id       text NOT NULL,
            temporary        boolean NOT NULL DEFAULT false,
            status           text NOT NULL DEFAULT 'pending',
            attempts         integer NOT NULL DEFAULT 0,
            next_attempt_at  timestamptz,
            last_status_code integer,
            created_at       timestamptz NOT NULL DEFAULT now(),
            finished_at      timestamptz,
            CONSTRAINT uq_webhook_deliveries_event_endpoint UNIQUE (event_id, endpoint_id),
            CONSTRAINT ck_webhook_deliveries_status
                CHECK (status IN ('pending', 'delivered', 'failed')),
            CONSTRAINT ck_webhook_deliveries_version CHECK (version IN ('v1', 'v2'))
        );
        CREATE INDEX ix_webhook_deliveries_endpoint_id ON webhook_deliveries (endpoint_id);

        -- Every POST made, automatic or resend; the id is the resend's webhookLogId (2.13).
        CREATE TABLE webhook_attempts (
            id               bigserial PRIMARY KEY,
            delivery_id      bigint NOT NULL REFERENCES webhook_deliveries (id),
            url              text NOT NULL,
            trigger          text NOT NULL,
            status_code      integer,
            duration_ms      integer NOT NULL,
            response_excerpt text,
            error            text,
            sent_at          timestamptz NOT NULL,
            CONSTRAINT ck_webhook_attempts_trigger CHECK (trigger IN ('delivery', 'resend'))
        );
        CREATE INDEX ix_webhook_attempts_delivery_id ON webhook_attempts (delivery_id, id);
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP TABLE webhook_attempts;
        DROP TABLE webhook_deliveries;
        DROP TABLE webhook_secrets;
        DROP TABLE webhook_endpoints;
        """
    )
