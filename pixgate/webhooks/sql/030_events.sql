-- The outbox of webhooks: an event, its deliveries to every active URL of its type, and a
-- delivery job each, in the caller's transaction. `pixgate/webhooks/queries/outbox.py` and the payout
-- functions record events through it; the delivery's message id (Standard Webhooks'
-- `webhook-id`, stable across retries) is made here and only here.

DROP FUNCTION IF EXISTS webhook_message_id, event_payment_fact, webhook_delivery_url, event_pix_key, record_event;

-- `webhook-id`: stable per event and destination, so retries and resends share it.
CREATE FUNCTION webhook_message_id(p_event_id uuid, p_destination text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 'msg_' || replace(p_event_id::text, '-', '') || '_' || p_destination
$$;

-- What an event tells about a payment, under names of its own (the keys
-- `pixgate/webhooks/rules/event_facts.py` reads), so renaming a column changes no stored event and
-- no payload. NULL for no row (the LEFT JOINs of `record_event`).
CREATE FUNCTION event_payment_fact(t transactions) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF t.id IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN jsonb_build_object(
        'id', t.id, 'transactionId', t.transaction_id, 'operation', t.operation,
        'status', t.status, 'amountCents', t.amount, 'feeCents', t.fee,
        'externalId', t.external_id, 'endToEndId', t.end_to_end_id,
        'idempotencyKey', t.idempotency_key, 'pixKey', t.pix_key,
        'description', t.description, 'txid', t.details -> 'txid',
        'providerTransactionId', t.details -> 'providerTransactionId',
        'errorCode', t.error_code, 'errorMessage', t.error_message,
        'processedAt', t.processed_at,
        'counterpart', jsonb_build_object(
            'name', t.counterpart -> 'name',
            'document', t.counterpart -> 'document',
            'ispb', t.counterpart -> 'bank' -> 'bankISPB',
            'bankName', t.counterpart -> 'bank' -> 'bankName',
            'bankCode', t.counterpart -> 'bank' -> 'bankCode',
            'branch', t.counterpart -> 'bank' -> 'accountBranch',
            'accountNumber', t.counterpart -> 'bank' -> 'accountNumber'));
END
$$;

-- Where a delivery to an endpoint goes: a webhook by key (`api_pix`, the Central Bank's
-- `PUT /webhook/{chave}`) is called at its URL + `/pix`, as the document's callback
-- `{webhookUrl}/pix` says; every other endpoint at its URL.
CREATE FUNCTION webhook_delivery_url(p_url text, p_version text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_version = 'api_pix' THEN p_url || '/pix' ELSE p_url END
$$;

-- The key that received the PIX an event is about, from its facts: the PIX received (a
-- `cash_in`) or the PIX a refund returns (a `refund_in`); NULL for every other event. That
-- key's webhook (`api_pix`) is told of the event too.
CREATE FUNCTION event_pix_key(p_type text, p_data jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT received ->> 'pixKey'
    FROM (SELECT CASE p_type WHEN 'cash_in' THEN p_data -> 'payment'
                             WHEN 'refund_in' THEN p_data -> 'original' END) AS f(received)
    WHERE received ->> 'operation' = 'PAYMENT'
$$;

CREATE FUNCTION record_event(
    p_account_id bigint, p_type text, p_transaction_id bigint, p_extra jsonb,
    p_job_kind text, p_max_runs int
) RETURNS TABLE (id bigint, jobs bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    -- PL/pgSQL, not SQL: PostgreSQL 15 parses and plans a SQL function's body on
    -- every call, a PL/pgSQL one once per session
    RETURN QUERY
    -- The payment is found by its primary key alone and its account checked after: with
    -- `account_id` in the join, the plan PL/pgSQL keeps for the session (made when the
    -- table was nearly empty) walked every row of the account in another index, a scan
    -- that grew with the account and cost a busy account a third of its settlements.
    WITH src AS MATERIALIZED (
        SELECT jsonb_build_object(
                   'version', 1,
                   'payment', CASE WHEN t.account_id = p_account_id
                                   THEN event_payment_fact(t) END,
                   'original', event_payment_fact(p), 'extra', p_extra) AS data
        FROM (SELECT 1) AS one
        LEFT JOIN transactions t ON t.id = p_transaction_id
        LEFT JOIN transactions p ON p.id = t.parent_id AND t.account_id = p_account_id
    ), ev AS (
        INSERT INTO events (account_id, type, transaction_id, data)
        SELECT p_account_id, p_type, p_transaction_id, src.data FROM src
        RETURNING id, event_id, account_id, type
    ), endpoint AS (
        SELECT we.id, we.url, we.version
        FROM ev JOIN webhook_endpoints we
          ON we.account_id = ev.account_id AND we.event_type = ev.type
         AND we.is_active
        UNION ALL
        -- the webhook by key, while the key is still the account's
        SELECT we.id, we.url, we.version
        FROM src JOIN webhook_endpoints we
          ON we.pix_key = event_pix_key(p_type, src.data) AND we.is_active
        JOIN account_keys k ON k.key = we.pix_key AND k.account_id = we.account_id
        WHERE we.account_id = p_account_id
    ), delivery AS (
        INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, url,
                                        version, message_id)
        SELECT ev.id, ev.account_id, endpoint.id,
               webhook_delivery_url(endpoint.url, endpoint.version), endpoint.version,
               webhook_message_id(ev.event_id, endpoint.id::text)
        FROM ev CROSS JOIN endpoint
        RETURNING id
    ), job AS MATERIALIZED (
        SELECT job_enqueue(p_job_kind, jsonb_build_object('delivery_id', delivery.id),
                           NULL, p_max_runs)
        FROM delivery
    )
    SELECT ev.id, (SELECT count(*) FROM job) FROM ev;
END
$$;
