-- The outbox of webhooks: an event, its deliveries to every active URL of its type, and a
-- delivery job each, in the caller's transaction. `pixgate/webhooks/queries/outbox.py` and the payout
-- functions record events through it; the delivery's message id (Standard Webhooks'
-- `webhook-id`, stable across retries) is made here and only here.

DROP FUNCTION IF EXISTS webhook_message_id, event_payment_fact, webhook_delivery_url, event_pix_key, record_events, record_event;

-- `webhook-id`: stable per event and destination, so retries and resends share it.
CREATE FUNCTION webhook_message_id(p_event_id uuid, p_destination text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 'msg_' || replace(p_event_id::text, '-', '') || '_' || p_destination
$$;

-- What an event tells about a payment, under names of its own (the keys
-- `pixgate/webhooks/rules/event_facts.py` reads), so renaming a column changes no stored event and
-- no payload. NULL for no row (the LEFT JOINs of `record_events`). SQL of one expression, so
-- that the planner writes it into the query that calls it: a PL/pgSQL function would be
-- called, with the whole row, twice per event.
CREATE FUNCTION event_payment_fact(t transactions) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN t.id IS NOT NULL THEN jsonb_build_object(
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
            'accountNumber', t.counterpart -> 'bank' -> 'accountNumber')) END
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

-- The events of several payments, in order: each event's facts (its transaction's and that
-- transaction's parent's, when the transaction is the account's), the event row, one
-- delivery per active endpoint of the event's type (and per webhook of the key the payment
-- was received on), one `webhook.deliver` job per delivery. One query for all of them, so
-- that a batch of settlements plans and starts it once, not once per payout. Each event's
-- id and its jobs, by position in the arrays.
CREATE FUNCTION record_events(
    p_account_id bigint[], p_type text[], p_transaction_id bigint[], p_extra jsonb[],
    p_job_kind text, p_max_runs int
) RETURNS TABLE (ord int, id bigint, jobs bigint)
LANGUAGE plpgsql
-- PL/pgSQL, not SQL: PostgreSQL 15 parses a SQL function's body on every call. The plan is
-- kept for the session (generic) rather than made for each call's arrays (custom): a custom
-- plan of one known element always looks cheaper than the generic one, so PostgreSQL kept
-- planning this query anew, 1.3 ms a call, more than the query itself. The generic plan
-- cannot turn into whole-table scans (see below), and PostgreSQL makes it again when a
-- table's statistics change.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    -- Each payment is found by its primary key alone, one lookup per event (the LIMIT keeps
    -- the planner from turning the lookups into a join, which a plan PL/pgSQL keeps for the
    -- session, made when the table was nearly empty, could do with a scan of the whole
    -- table, slower with every payment), and its account checked after. The events' ids
    -- are drawn here, in order, so that their deliveries can name them.
    WITH src AS MATERIALIZED (
        SELECT u.n::int AS n, nextval('events_id_seq') AS id, gen_random_uuid() AS event_id,
               u.account_id, u.type, u.transaction_id,
               jsonb_build_object(
                   'version', 1,
                   'payment', CASE WHEN (t.tx).account_id = u.account_id
                                   THEN event_payment_fact(t.tx) END,
                   'original', event_payment_fact(p.tx), 'extra', u.extra) AS data
        FROM unnest(p_account_id, p_type, p_transaction_id, p_extra) WITH ORDINALITY
             AS u(account_id, type, transaction_id, extra, n)
        LEFT JOIN LATERAL (
            SELECT x AS tx FROM transactions x WHERE x.id = u.transaction_id LIMIT 1
        ) t ON true
        LEFT JOIN LATERAL (
            SELECT x AS tx FROM transactions x
            WHERE x.id = (t.tx).parent_id AND (t.tx).account_id = u.account_id LIMIT 1
        ) p ON true
        ORDER BY u.n
    ), ev AS (
        INSERT INTO events (id, event_id, account_id, type, transaction_id, data)
        SELECT s.id, s.event_id, s.account_id, s.type, s.transaction_id, s.data
        FROM src s ORDER BY s.n
        RETURNING id
    ), endpoint AS (
        -- each event's endpoints looked up apart as well (the OFFSET keeps them apart)
        SELECT s.id AS event, s.event_id, s.account_id, we.id, we.url, we.version
        FROM src s CROSS JOIN LATERAL (
            (SELECT we.id, we.url, we.version
             FROM webhook_endpoints we
             WHERE we.account_id = s.account_id AND we.event_type = s.type AND we.is_active)
            UNION ALL
            -- the webhook by key, while the key is still the account's
            (SELECT we.id, we.url, we.version
             FROM webhook_endpoints we
             JOIN account_keys k ON k.key = we.pix_key AND k.account_id = we.account_id
             WHERE we.pix_key = event_pix_key(s.type, s.data) AND we.is_active
               AND we.account_id = s.account_id)
            OFFSET 0
        ) we
    ), delivery AS (
        INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, url,
                                        version, message_id)
        SELECT e.event, e.account_id, e.id, webhook_delivery_url(e.url, e.version),
               e.version, webhook_message_id(e.event_id, e.id::text)
        FROM endpoint e
        RETURNING id, event_id
    ), job AS MATERIALIZED (
        SELECT d.event_id AS event,
               job_enqueue(p_job_kind, jsonb_build_object('delivery_id', d.id), NULL,
                           p_max_runs) AS id
        FROM delivery d
    )
    SELECT s.n, s.id, (SELECT count(*) FROM job j WHERE j.event = s.id)
    FROM src s JOIN ev ON ev.id = s.id
    ORDER BY s.n;
END
$$;

-- One event (record_events()): its id and its jobs.
CREATE FUNCTION record_event(
    p_account_id bigint, p_type text, p_transaction_id bigint, p_extra jsonb,
    p_job_kind text, p_max_runs int
) RETURNS TABLE (id bigint, jobs bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT e.id, e.jobs
    FROM record_events(ARRAY[p_account_id], ARRAY[p_type], ARRAY[p_transaction_id],
                       ARRAY[p_extra], p_job_kind, p_max_runs) AS e;
END
$$;
