-- Outgoing payments (cash-out, QR cash-out, DICT transfer, a charge's split payouts): held
-- when accepted, settled once the settling bank has decided (refunds of received PIX, held
-- by 050_refunds.sql, are settled by settle_payout() too). One call each, so the hot
-- path is one round trip; several payouts of one account that wait for its row go in one
-- call of the batch functions (pixgate/core/db/batches.py), each element in a subtransaction of
-- its own: a refused element is rolled back alone and reported in its row.
--
-- SQLSTATEs (mapped to errors by pixgate/payouts/queries/payments.py):
-- PXT01 the account's fees or limits are not the ones the caller priced the payout with;
-- PXB01 available balance below amount + fee;
-- PXH01 a cash-out's key is held by one of our accounts: it is paid in the house instead;
-- PXL00 / PXL01 / PXL02 the per-transaction / daily / nightly limit (020_limits.sql).

DROP FUNCTION IF EXISTS payout_terms_changed, payout_accept, payout_create, payouts_create, payouts_create_together, settle_payout, settle_payouts, settle_payouts_together;

-- Whether the account row a hold locked has other terms than the ones a payout was priced
-- with (p_limits: [transaction, daily, night]): the payout is then refused (PXT01), so that
-- no change of terms can slip in between pricing and holding.
CREATE FUNCTION payout_terms_changed(p_account accounts, p_fees jsonb, p_limits bigint[])
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_account.fees IS DISTINCT FROM p_fees
        OR ARRAY[p_account.transaction_limit, p_account.daily_limit, p_account.night_limit]
           IS DISTINCT FROM p_limits
$$;

-- Accepting a payout whose row is written: the one place where its hold, its limits and its
-- settlement job are put together. p_mode says what differs:
--   'cash_out'  priced by the caller from its copy of the account's terms (a cash-out, a QR
--               cash-out to another bank): the locked row's terms must still be p_fees and
--               p_limits (PXT01), then the limits are checked and counted (PXL00-02), then
--               the balance (PXB01);
--   'counted'   its limits were decided before (a DICT transfer, a split payout): counted,
--               never refused; false, and nothing written, when the balance is short;
--   'refund'    a refund of a received PIX: no fee, no limits; PXB01 when the balance is short;
--   'in_house'  a payment settled at once in the house (a QR cash-out paying one of our
--               charges, a cash-out to one of our accounts' keys): the limits checked and
--               counted, PXB01 when short, the hold posted to the settlement book; no job;
--   'in_house_counted'  a DICT transfer to one of our accounts' keys, settled at once: its
--               limits counted as 'counted' (false, and nothing written, when the balance is
--               short), the hold posted to the settlement book; no job.
CREATE FUNCTION payout_accept(
    p_mode text, p_account bigint, p_transaction bigint, p_amount bigint, p_fee bigint,
    p_created_at timestamptz, p_day_start timestamptz, p_night_start timestamptz,
    p_job_kind text, p_run_at timestamptz, p_max_attempts int,
    p_fees jsonb DEFAULT NULL, p_limits bigint[] DEFAULT NULL,
    p_transaction_limit bigint DEFAULT NULL, p_daily_limit bigint DEFAULT NULL,
    p_night_limit bigint DEFAULT NULL
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v_account accounts := ledger_hold(p_account, p_amount + p_fee, p_transaction);
    v_held boolean := v_account.id IS NOT NULL;
    v_job bigint;
BEGIN
    IF p_mode NOT IN ('cash_out', 'counted', 'refund', 'in_house', 'in_house_counted') THEN
        RAISE EXCEPTION 'unknown payout acceptance mode %', p_mode;
    END IF;
    IF p_mode = 'cash_out' THEN
        IF NOT v_held THEN  -- the terms are then read without the row's lock
            SELECT * INTO v_account FROM accounts a WHERE a.id = p_account;
        END IF;
        IF payout_terms_changed(v_account, p_fees, p_limits) THEN
            RAISE EXCEPTION 'account terms changed' USING ERRCODE = 'PXT01';
        END IF;
    END IF;
    IF p_mode IN ('cash_out', 'in_house') THEN
        PERFORM limit_check(p_account, p_created_at, p_amount, p_transaction_limit,
                            p_daily_limit, p_night_limit, p_day_start, p_night_start);
    ELSIF p_mode IN ('counted', 'in_house_counted') AND v_held THEN
        PERFORM limit_count(p_account, p_created_at, p_amount, p_day_start, p_night_start);
    END IF;
    IF NOT v_held THEN
        IF p_mode IN ('counted', 'in_house_counted') THEN
            RETURN false;
        END IF;
        RAISE EXCEPTION 'available balance is less than amount + fee' USING ERRCODE = 'PXB01';
    END IF;
    IF p_mode IN ('in_house', 'in_house_counted') THEN
        PERFORM ledger_post(p_account, p_amount, p_fee, p_transaction);
    ELSE
        v_job := job_enqueue(p_job_kind, jsonb_build_object('transaction_id', p_transaction),
                             p_run_at, p_max_attempts);
    END IF;
    RETURN true;
END
$$;

-- A cash-out: its PENDING row, accepted (payout_accept(), 'cash_out'), or a refusal that
-- writes nothing (PXH01 first, for a key one of our accounts holds). No row when the externalId was already used (the caller explains).
-- p_instructions, opaque here, is what the request told the provider, kept for it until
-- settlement (NULL: nothing).
CREATE FUNCTION payout_create(
    p_account_id bigint, p_kind text, p_external_id text, p_amount bigint,
    p_fee bigint, p_pix_key text, p_pix_key_type text, p_description text,
    p_details jsonb, p_created_at timestamptz, p_job_kind text, p_run_at timestamptz,
    p_max_attempts int, p_fees jsonb, p_limits bigint[], p_transaction_limit bigint,
    p_daily_limit bigint, p_night_limit bigint, p_day_start timestamptz,
    p_night_start timestamptz, p_instructions text
) RETURNS TABLE (id bigint, transaction_id uuid, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
    v_transaction_id uuid;
    v_created_at timestamptz;
    v_accepted boolean;
BEGIN
    IF EXISTS (SELECT 1 FROM account_keys k WHERE k.key = p_pix_key) THEN
        RAISE EXCEPTION 'the key is held by an account of this gateway' USING ERRCODE = 'PXH01';
    END IF;
    INSERT INTO transactions AS t (account_id, operation, kind, status, external_id,
                                   amount, fee, pix_key, pix_key_type, description,
                                   details, created_at)
    VALUES (p_account_id, 'WITHDRAW', p_kind, 'PENDING', p_external_id, p_amount,
            p_fee, p_pix_key, p_pix_key_type, p_description, p_details, p_created_at)
    ON CONFLICT (account_id, external_id) DO NOTHING
    RETURNING t.id, t.transaction_id, t.created_at
    INTO v_id, v_transaction_id, v_created_at;
    IF v_id IS NULL THEN
        RETURN;
    END IF;
    IF p_instructions IS NOT NULL THEN
        INSERT INTO provider_instructions (transaction_id, value) VALUES (v_id, p_instructions);
    END IF;
    -- An assignment, not PERFORM: PL/pgSQL evaluates a lone call as a simple expression,
    -- without starting an executor (a few microseconds under the account's row lock).
    v_accepted := payout_accept('cash_out', p_account_id, v_id, p_amount, p_fee,
                                p_created_at, p_day_start, p_night_start, p_job_kind,
                                p_run_at, p_max_attempts, p_fees, p_limits,
                                p_transaction_limit, p_daily_limit, p_night_limit);
    id := v_id;
    transaction_id := v_transaction_id;
    created_at := v_created_at;
    RETURN NEXT;
END
$$;

-- PENDING -> final once, its event, and the hold posted (CONFIRMED) or voided with the
-- amount given back to the limits (ERROR; a WITHDRAW's only: refunds, 050_refunds.sql,
-- are settled here too but never counted by the limits). No row when another run already
-- settled it. p_counterpart, the counterpart the bank names (NULL: the row's stays), comes
-- with its link, p_counterpart_ispb and p_counterpart_account (our account's id, or NULL):
-- the three are written together (pixgate/core/counterparts.py).
CREATE FUNCTION settle_payout(
    p_id bigint, p_status text, p_end_to_end_id text, p_counterpart jsonb,
    p_error_code text, p_error_message text, p_processed_at timestamptz,
    p_event_type text, p_job_kind text, p_max_runs int,
    p_counterpart_ispb text DEFAULT NULL, p_counterpart_account bigint DEFAULT NULL
) RETURNS TABLE (account_id bigint, status text, jobs bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v transactions%ROWTYPE;
    v_jobs bigint;
BEGIN
    UPDATE transactions t
    SET status = p_status, end_to_end_id = coalesce(t.end_to_end_id, p_end_to_end_id),
        counterpart = coalesce(p_counterpart, t.counterpart),
        counterpart_ispb = CASE WHEN p_counterpart IS NULL THEN t.counterpart_ispb
                                ELSE p_counterpart_ispb END,
        counterpart_account_id = CASE WHEN p_counterpart IS NULL THEN t.counterpart_account_id
                                      ELSE p_counterpart_account END,
        error_code = p_error_code, error_message = p_error_message,
        processed_at = p_processed_at
    WHERE t.id = p_id AND t.status = 'PENDING'
    RETURNING t.* INTO v;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT e.jobs INTO v_jobs
    FROM record_event(v.account_id, p_event_type, p_id, '{}'::jsonb, p_job_kind,
                      p_max_runs) e;
    IF v.status = 'CONFIRMED' THEN
        PERFORM ledger_post(v.account_id, v.amount, v.fee, p_id);
    ELSE
        PERFORM ledger_void(v.account_id, v.amount + v.fee, p_id);
        IF v.operation = 'WITHDRAW' THEN
            PERFORM limit_give_back(v.account_id, v.created_at, v.amount);
        END IF;
    END IF;

    account_id := v.account_id;
    status := v.status;
    jobs := v_jobs;
    RETURN NEXT;
END
$$;

-- payout_create() for several cash-outs of one account at once, as if one after the other in
-- order, when all of them are accepted: one statement writes their rows, one moves the
-- account's row, one writes the postings of their holds and one their jobs, where one at a
-- time takes a statement per step and payout. Anything else (a refusal, an externalId
-- already used, priced with other terms or in another quarter-hour of limits than the first)
-- raises, and payouts_create() then goes one by one.
CREATE FUNCTION payouts_create_together(
    p_account_id bigint, p_kind text[], p_external_id text[], p_amount bigint[],
    p_fee bigint[], p_pix_key text[], p_pix_key_type text[], p_description text[],
    p_details jsonb[], p_created_at timestamptz[], p_job_kind text[],
    p_run_at timestamptz[], p_max_attempts int[], p_fees jsonb[], p_limits bigint[],
    p_transaction_limit bigint[], p_daily_limit bigint[], p_night_limit bigint[],
    p_day_start timestamptz[], p_night_start timestamptz[], p_instructions text[]
) RETURNS TABLE (ord int, id bigint, transaction_id uuid, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    n int := coalesce(array_length(p_kind, 1), 0);
    v_ids bigint[];
    v_uuids uuid[];
    v_times timestamptz[];
    v_account accounts;
BEGIN
    FOR i IN 2 .. n LOOP
        IF p_fees[i] IS DISTINCT FROM p_fees[1]
           OR p_limits[i][1] IS DISTINCT FROM p_limits[1][1]
           OR p_limits[i][2] IS DISTINCT FROM p_limits[1][2]
           OR p_limits[i][3] IS DISTINCT FROM p_limits[1][3]
           OR p_transaction_limit[i] IS DISTINCT FROM p_transaction_limit[1]
           OR p_daily_limit[i] IS DISTINCT FROM p_daily_limit[1]
           OR p_night_limit[i] IS DISTINCT FROM p_night_limit[1]
           OR p_day_start[i] IS DISTINCT FROM p_day_start[1]
           OR p_night_start[i] IS DISTINCT FROM p_night_start[1]
           OR limit_bucket(p_created_at[i]) <> limit_bucket(p_created_at[1])
           OR p_job_kind[i] <> p_job_kind[1] OR p_max_attempts[i] <> p_max_attempts[1] THEN
            RAISE EXCEPTION 'payouts priced apart are held one by one';
        END IF;
    END LOOP;
    IF EXISTS (SELECT 1 FROM account_keys k WHERE k.key = ANY (p_pix_key)) THEN
        RAISE EXCEPTION 'the key is held by an account of this gateway' USING ERRCODE = 'PXH01';
    END IF;
    WITH added AS (
        INSERT INTO transactions AS t (account_id, operation, kind, status, external_id,
                                       amount, fee, pix_key, pix_key_type, description,
                                       details, created_at)
        SELECT p_account_id, 'WITHDRAW', u.kind, 'PENDING', u.external_id, u.amount, u.fee,
               u.pix_key, u.pix_key_type, u.description, u.details, u.created_at
        FROM unnest(p_kind, p_external_id, p_amount, p_fee, p_pix_key, p_pix_key_type,
                    p_description, p_details, p_created_at) WITH ORDINALITY
             AS u(kind, external_id, amount, fee, pix_key, pix_key_type, description, details,
                  created_at, n)
        ORDER BY u.n
        ON CONFLICT (account_id, external_id) DO NOTHING
        RETURNING t.id, t.transaction_id, t.created_at,
                  array_position(p_external_id, t.external_id) AS n
    )
    SELECT array_agg(a.id ORDER BY a.n), array_agg(a.transaction_id ORDER BY a.n),
           array_agg(a.created_at ORDER BY a.n)
    INTO v_ids, v_uuids, v_times
    FROM added a;
    IF coalesce(array_length(v_ids, 1), 0) < n THEN
        RAISE EXCEPTION 'an externalId was already used' USING ERRCODE = 'unique_violation';
    END IF;
    IF array_remove(p_instructions, NULL) <> '{}' THEN
        INSERT INTO provider_instructions (transaction_id, value)
        SELECT v_ids[i], p_instructions[i]
        FROM generate_subscripts(p_instructions, 1) AS i
        WHERE p_instructions[i] IS NOT NULL;
    END IF;
    v_account := ledger_hold_all(
        p_account_id,
        ARRAY(SELECT a + f FROM unnest(p_amount, p_fee) WITH ORDINALITY AS u(a, f, k)
              ORDER BY k),
        v_ids);
    IF v_account.id IS NULL THEN
        RAISE EXCEPTION 'available balance is less than amount + fee' USING ERRCODE = 'PXB01';
    END IF;
    IF payout_terms_changed(v_account, p_fees[1],
                            ARRAY[p_limits[1][1], p_limits[1][2], p_limits[1][3]]) THEN
        RAISE EXCEPTION 'account terms changed' USING ERRCODE = 'PXT01';
    END IF;
    PERFORM limit_check_all(p_account_id, p_created_at[1], p_amount, p_transaction_limit[1],
                            p_daily_limit[1], p_night_limit[1], p_day_start[1],
                            p_night_start[1]);
    PERFORM job_enqueue_all(
        p_job_kind[1],
        ARRAY(SELECT jsonb_build_object('transaction_id', x) FROM unnest(v_ids)
              WITH ORDINALITY AS u(x, k) ORDER BY k),
        p_run_at, p_max_attempts[1]);
    FOR i IN 1 .. n LOOP
        ord := i;
        id := v_ids[i];
        transaction_id := v_uuids[i];
        created_at := v_times[i];
        RETURN NEXT;
    END LOOP;
END
$$;

-- payout_create() for several payouts, sorted by account (ascending, so that two such
-- statements lock the accounts' rows in one order; payouts out of that order are refused),
-- each account's in order: a later one sees the earlier ones' holds and limit usage, as if
-- they had been sent one after the other. Each account's all at once
-- (payouts_create_together()), or, when that fails, one by one, each in a subtransaction of
-- its own, so that a refused payout is rolled back alone and no other account's is touched.
-- ord is the payout's place in the arrays.
CREATE FUNCTION payouts_create(
    p_account_id bigint[], p_kind text[], p_external_id text[], p_amount bigint[],
    p_fee bigint[], p_pix_key text[], p_pix_key_type text[], p_description text[],
    p_details jsonb[], p_created_at timestamptz[], p_job_kind text[],
    p_run_at timestamptz[], p_max_attempts int[], p_fees jsonb[], p_limits bigint[],
    p_transaction_limit bigint[], p_daily_limit bigint[], p_night_limit bigint[],
    p_day_start timestamptz[], p_night_start timestamptz[], p_instructions text[]
) RETURNS TABLE (ord int, id bigint, transaction_id uuid, created_at timestamptz,
                 err_state text, err_message text, err_detail text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    n int := coalesce(array_length(p_account_id, 1), 0);
    lo int := 1;
    hi int;
BEGIN
    WHILE lo <= n LOOP
        hi := lo;
        WHILE hi < n AND p_account_id[hi + 1] = p_account_id[lo] LOOP
            hi := hi + 1;
        END LOOP;
        IF hi < n AND p_account_id[hi + 1] < p_account_id[lo] THEN
            RAISE EXCEPTION 'payouts not sorted by account';
        END IF;
        -- a PL/pgSQL function returns its rows once it has finished: none is returned here
        -- unless all of the account's are; a lone payout gains nothing from going together
        IF hi > lo THEN
            BEGIN
                RETURN QUERY
                SELECT lo - 1 + t.ord, t.id, t.transaction_id, t.created_at, NULL::text,
                       NULL::text, NULL::text
                FROM payouts_create_together(
                    p_account_id[lo], p_kind[lo:hi], p_external_id[lo:hi], p_amount[lo:hi],
                    p_fee[lo:hi], p_pix_key[lo:hi], p_pix_key_type[lo:hi],
                    p_description[lo:hi], p_details[lo:hi], p_created_at[lo:hi],
                    p_job_kind[lo:hi], p_run_at[lo:hi], p_max_attempts[lo:hi],
                    p_fees[lo:hi], p_limits[lo:hi][1:3], p_transaction_limit[lo:hi],
                    p_daily_limit[lo:hi], p_night_limit[lo:hi], p_day_start[lo:hi],
                    p_night_start[lo:hi], p_instructions[lo:hi]) AS t;
                lo := hi + 1;
                CONTINUE;
            EXCEPTION WHEN OTHERS THEN
                NULL;  -- rolled back whole: one by one below
            END;
        END IF;
        -- p_limits is n x 3: each element's [transaction, daily, night] limits as priced
        FOR i IN lo .. hi LOOP
            ord := i;
            id := NULL; transaction_id := NULL; created_at := NULL;
            err_state := NULL; err_message := NULL; err_detail := NULL;
            BEGIN
                SELECT h.id, h.transaction_id, h.created_at
                INTO id, transaction_id, created_at
                FROM payout_create(
                    p_account_id[i], p_kind[i], p_external_id[i], p_amount[i], p_fee[i],
                    p_pix_key[i], p_pix_key_type[i], p_description[i], p_details[i],
                    p_created_at[i], p_job_kind[i], p_run_at[i], p_max_attempts[i], p_fees[i],
                    ARRAY[p_limits[i][1], p_limits[i][2], p_limits[i][3]],
                    p_transaction_limit[i], p_daily_limit[i], p_night_limit[i],
                    p_day_start[i], p_night_start[i], p_instructions[i]) h;
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE,
                                        err_message = MESSAGE_TEXT,
                                        err_detail = PG_EXCEPTION_DETAIL;
            END;
            RETURN NEXT;
        END LOOP;
        lo := hi + 1;
    END LOOP;
END
$$;

-- settle_payout() for several payouts at once, as if one after the other in order: the
-- same rows, events and postings, but one statement for all the rows, one update of each
-- account's row and one insert of all the postings, where one at a time takes a statement
-- per step and payout. A payout asked twice is settled by its first element only. It fails
-- whole (settle_payouts() then goes one by one).
CREATE FUNCTION settle_payouts_together(
    p_id bigint[], p_status text[], p_end_to_end_id text[], p_counterpart jsonb[],
    p_counterpart_ispb text[], p_counterpart_account bigint[],
    p_error_code text[], p_error_message text[], p_processed_at timestamptz[],
    p_event_type text[], p_job_kind text, p_max_runs int
) RETURNS TABLE (ord int, account_id bigint, status text, jobs bigint)
LANGUAGE plpgsql
-- Its statements' plans are kept for the session, as record_events() keeps its own: left to
-- choose, PostgreSQL planned the update of the payouts anew on every call once the table
-- had statistics (a plan for the call's known arrays looks cheaper than the generic one),
-- 0.24-0.38 ms a call, as long as running it when a few settlements go together. A plan kept
-- for the session must read each payout by its key however young the table was when it was
-- made: a plan made in a new database's first minute that scanned `transactions` (or its
-- status index) for the PENDING rows read the whole table on every call, longer with every
-- payment, until autovacuum's first ANALYZE. So each payout is found by its primary key
-- (a lookup the planner cannot turn into a scan) and locked as it is found, then updated by
-- its row address; with sequential scans off, the only plan left for that update is a TID
-- lookup. Everything this function and those it calls read is read by key.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_settled transactions[];
    v_ord int[];
    v_type text[];
    v_accounts bigint[];
    v_ids bigint[];
    v_locked bigint;
    v_jobs bigint[];
    v_move record;
    k int;
BEGIN
    WITH asked AS (
        SELECT DISTINCT ON (a.id) a.*
        FROM unnest(p_id, p_status, p_end_to_end_id, p_counterpart, p_counterpart_ispb,
                    p_counterpart_account, p_error_code, p_error_message, p_processed_at,
                    p_event_type) WITH ORDINALITY
             AS a(id, status, end_to_end_id, counterpart, counterpart_ispb,
                  counterpart_account, error_code, error_message, processed_at, event_type, n)
        ORDER BY a.id, a.n
    ), pending AS (
        -- locked while PENDING, so no other settlement can change them before the update;
        -- one that settled them first (waited for here) leaves them out. A row another
        -- transaction changed otherwise, since this statement began, is locked in a version
        -- the update cannot see: it is counted here, and the call fails whole (below).
        SELECT a.*, x.tid
        FROM asked a
        CROSS JOIN LATERAL (
            SELECT y.ctid AS tid FROM transactions y
            WHERE y.id = a.id AND y.status = 'PENDING'
            FOR NO KEY UPDATE
        ) AS x
    ), settled AS (
        UPDATE transactions t
        SET status = a.status, end_to_end_id = coalesce(t.end_to_end_id, a.end_to_end_id),
            counterpart = coalesce(a.counterpart, t.counterpart),
            counterpart_ispb = CASE WHEN a.counterpart IS NULL THEN t.counterpart_ispb
                                    ELSE a.counterpart_ispb END,
            counterpart_account_id = CASE WHEN a.counterpart IS NULL
                                          THEN t.counterpart_account_id
                                          ELSE a.counterpart_account END,
            error_code = a.error_code, error_message = a.error_message,
            processed_at = a.processed_at
        FROM pending a
        WHERE t.ctid = a.tid
        RETURNING t AS payout, a.n::int AS n, a.event_type
    )
    SELECT array_agg(s.payout ORDER BY s.n), array_agg(s.n ORDER BY s.n),
           array_agg(s.event_type ORDER BY s.n),
           array_agg((s.payout).account_id ORDER BY s.n), array_agg((s.payout).id ORDER BY s.n),
           (SELECT count(*) FROM pending)
    INTO v_settled, v_ord, v_type, v_accounts, v_ids, v_locked
    FROM settled s;
    IF v_locked <> coalesce(cardinality(v_ids), 0) THEN
        RAISE EXCEPTION 'a payout changed while it was being settled';  -- one by one instead
    END IF;
    IF v_settled IS NOT NULL THEN
        SELECT array_agg(e.jobs ORDER BY e.ord) INTO v_jobs
        FROM record_events(v_accounts, v_type, v_ids,
                           array_fill('{}'::jsonb, ARRAY[cardinality(v_ids)]), p_job_kind,
                           p_max_runs) AS e;
        FOR v_move IN
            WITH payout AS (
                SELECT s.account_id, s.id, s.amount, s.fee, s.status = 'CONFIRMED' AS posted,
                       s.ordinality AS n
                FROM unnest(v_settled) WITH ORDINALITY AS s
            )
            SELECT p.account_id,
                   array_agg(p.amount ORDER BY p.n) FILTER (WHERE p.posted) AS posted,
                   array_agg(p.fee ORDER BY p.n) FILTER (WHERE p.posted) AS fees,
                   array_agg(p.id ORDER BY p.n) FILTER (WHERE p.posted) AS posted_ids,
                   array_agg(p.amount + p.fee ORDER BY p.n) FILTER (WHERE NOT p.posted)
                       AS voided,
                   array_agg(p.id ORDER BY p.n) FILTER (WHERE NOT p.posted) AS voided_ids
            FROM payout p
            GROUP BY p.account_id
            ORDER BY p.account_id
        LOOP
            IF v_move.posted IS NOT NULL THEN
                PERFORM ledger_post_all(v_move.account_id, v_move.posted, v_move.fees,
                                        v_move.posted_ids);
            END IF;
            IF v_move.voided IS NOT NULL THEN
                PERFORM ledger_void_all(v_move.account_id, v_move.voided, v_move.voided_ids);
            END IF;
        END LOOP;
        PERFORM limit_give_back(s.account_id, s.created_at, s.amount)
        FROM unnest(v_settled) AS s
        WHERE s.status <> 'CONFIRMED' AND s.operation = 'WITHDRAW';
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_id, 1), 0) LOOP
        k := array_position(v_ord, i);
        ord := i;
        account_id := (v_settled[k]).account_id;
        status := (v_settled[k]).status;
        jobs := v_jobs[k];
        RETURN NEXT;
    END LOOP;
END
$$;

-- settle_payout() for several payouts, in order: all at once (settle_payouts_together()),
-- or, when that fails, one by one, each in a subtransaction of its own, so that only the
-- payout that fails is refused.
CREATE FUNCTION settle_payouts(
    p_id bigint[], p_status text[], p_end_to_end_id text[], p_counterpart jsonb[],
    p_counterpart_ispb text[], p_counterpart_account bigint[],
    p_error_code text[], p_error_message text[], p_processed_at timestamptz[],
    p_event_type text[], p_job_kind text, p_max_runs int
) RETURNS TABLE (ord int, account_id bigint, status text, jobs bigint,
                 err_state text, err_message text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    -- as in payouts_create()
    IF array_length(p_id, 1) > 1 THEN
        BEGIN
            RETURN QUERY
            SELECT t.ord, t.account_id, t.status, t.jobs, NULL::text, NULL::text
            FROM settle_payouts_together(
                p_id, p_status, p_end_to_end_id, p_counterpart, p_counterpart_ispb,
                p_counterpart_account, p_error_code, p_error_message, p_processed_at,
                p_event_type, p_job_kind, p_max_runs) AS t;
            RETURN;
        EXCEPTION WHEN OTHERS THEN
            NULL;  -- rolled back whole: one by one below
        END;
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_id, 1), 0) LOOP
        ord := i;
        account_id := NULL; status := NULL; jobs := NULL;
        err_state := NULL; err_message := NULL;
        BEGIN
            SELECT s.account_id, s.status, s.jobs INTO account_id, status, jobs
            FROM settle_payout(
                p_id[i], p_status[i], p_end_to_end_id[i], p_counterpart[i],
                p_error_code[i], p_error_message[i], p_processed_at[i],
                p_event_type[i], p_job_kind, p_max_runs, p_counterpart_ispb[i],
                p_counterpart_account[i]) s;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE,
                                    err_message = MESSAGE_TEXT;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;
