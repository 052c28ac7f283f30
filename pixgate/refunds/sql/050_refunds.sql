-- Refunds: a received PIX returned to its payer (REFUND_IN, held now and settled by the
-- settling bank like a cash-out), and a cash-out returned by its receiver (REFUND_OUT,
-- credited at once). Both families of refund request (POST /api/pix/refund-in/{id} and
-- PUT /pix/{e2eid}/devolucao/{id}) and MED approvals create their REFUND_IN here, so the
-- refundable balance of a PIX is counted by one rule.
--
-- A PIX that another of our accounts paid (an internal PIX: it paid the receiver's charge with
-- a QR cash-out, and the payer's WITHDRAW and the receiver's PAYMENT share one end-to-end id)
-- is returned in the house: its refund settles with refund_settle_in_house(), which credits the
-- payer with a REFUND_OUT of its WITHDRAW in the same transaction, never through the bank.
--
-- The original transaction's row is locked (FOR NO KEY UPDATE) before its refunds are counted:
-- two concurrent refunds of one PIX are counted one after the other, and their sum never
-- passes the original amount. Lock order: the transaction rows (the original first), then the
-- account rows, by ascending id when there are two.
--
-- SQLSTATEs (mapped to errors by pixgate/refunds/queries/refunds.py):
-- PXR00 the original is not a CONFIRMED transaction of the account of the refundable kind
--       (DETAIL 'in_house': a cash-out paid to another of our accounts, returned from outside);
-- PXR01 the refunds would add up to more than the original (DETAIL: what is left, cents);
-- PXR02 the refund window has closed (DETAIL: the last day a refund was accepted);
-- PXB01 available balance below the refund (as 040_payouts.sql).

DROP FUNCTION IF EXISTS refund_original, refund_left, refund_fits, refund_create, refund_credit, refund_twin, refund_settle_in_house;

-- The original of a refund, locked until the caller commits; PXR00 unless it is a
-- CONFIRMED p_operation transaction of p_account. The conditions are in the WHERE clause,
-- so a row that is not refundable (a charge's payment still PENDING) is never locked.
CREATE FUNCTION refund_original(p_account bigint, p_original bigint, p_operation text)
RETURNS transactions LANGUAGE plpgsql AS $$
DECLARE
    v transactions;
BEGIN
    SELECT * INTO v FROM transactions t
    WHERE t.id = p_original AND t.account_id = p_account
      AND t.operation = p_operation AND t.status = 'CONFIRMED'
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'transaction % is not a refundable transaction of account %',
            p_original, p_account USING ERRCODE = 'PXR00';
    END IF;
    RETURN v;
END
$$;

-- The other side of an internal PIX: one of our accounts paid another's charge
-- (pixgate/payouts/service/cash_out_qrcode.py), so the payer's WITHDRAW and the receiver's PAYMENT
-- share one end-to-end id, and each links the other as its counterpart: the gateway's ISPB
-- (p_ispb) in counterpart_ispb and the other's account in counterpart_account_id, written
-- from one Counterpart (pixgate/core/counterparts.py); the `counterpart` document is never
-- read here. The CONFIRMED row on the other side of p_tx (the WITHDRAW of a PAYMENT, the
-- PAYMENT of a WITHDRAW), found on ix_transactions_counterpart_account and not locked; NULL
-- for a PIX sent to or received from another bank.
CREATE FUNCTION refund_twin(p_tx transactions, p_ispb text) RETURNS transactions
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v transactions;
BEGIN
    IF p_tx.end_to_end_id IS NULL OR p_tx.counterpart_account_id IS NULL
       OR p_tx.counterpart_ispb IS DISTINCT FROM p_ispb THEN
        RETURN NULL;
    END IF;
    SELECT * INTO v FROM transactions t
    WHERE t.counterpart_account_id = p_tx.account_id AND t.end_to_end_id = p_tx.end_to_end_id
      AND t.account_id = p_tx.counterpart_account_id
      AND t.account_id <> p_tx.account_id
      AND t.operation = CASE p_tx.operation WHEN 'PAYMENT' THEN 'WITHDRAW' ELSE 'PAYMENT' END
      AND t.status = 'CONFIRMED';
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN v;
END
$$;

-- The refundable balance: what is left to refund of a transaction, its amount minus its
-- PENDING and CONFIRMED refunds (REFUND_IN of a PIX received, REFUND_OUT of a cash-out;
-- one that ended in ERROR no longer counts). Negative when they exceed it. Read it under
-- the original's lock (refund_original(), or FOR NO KEY UPDATE) for an answer that holds until
-- COMMIT. NULL for an unknown id.
CREATE FUNCTION refund_left(p_original bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_left bigint;
BEGIN
    SELECT o.amount - coalesce((
               SELECT sum(r.amount) FROM transactions r
               WHERE r.parent_id = o.id
                 AND r.operation = CASE o.operation WHEN 'WITHDRAW' THEN 'REFUND_OUT'
                                                    ELSE 'REFUND_IN' END
                 AND r.status IN ('PENDING', 'CONFIRMED')), 0)
    INTO v_left
    FROM transactions o WHERE o.id = p_original;
    RETURN v_left;
END
$$;

-- The refundable-balance rule, once the new refund (p_amount) is written: nothing left
-- below zero; PXR01 otherwise, with what was left before the new one as DETAIL.
CREATE FUNCTION refund_fits(p_original bigint, p_amount bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_left bigint := refund_left(p_original);
BEGIN
    IF v_left < 0 THEN
        RAISE EXCEPTION 'the refunds of transaction % would exceed its amount', p_original
            USING ERRCODE = 'PXR01', DETAIL = (v_left + p_amount)::text;
    END IF;
END
$$;

-- A refund of a received PIX: its PENDING REFUND_IN row, accepted like any payout
-- (payout_accept(), 'refund': its amount held, no fee, not counted by the outgoing limits,
-- its settlement job queued), or a refusal that writes nothing. No row when the externalId is already used in the account (the caller explains).
-- The window: a refund requested (p_created_at) more than p_window_days calendar days of
-- p_timezone after the original was credited (its processed_at) is refused; NULL: no window.
CREATE FUNCTION refund_create(
    p_account bigint, p_original bigint, p_kind text, p_external_id text, p_amount bigint,
    p_end_to_end_id text, p_description text, p_details jsonb, p_created_at timestamptz,
    p_window_days int, p_timezone text, p_job_kind text, p_run_at timestamptz,
    p_max_attempts int
) RETURNS TABLE (id bigint, transaction_id uuid, created_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_original transactions := refund_original(p_account, p_original, 'PAYMENT');
    v_last_day date;
    v_id bigint;
    v_transaction_id uuid;
    v_created_at timestamptz;
BEGIN
    INSERT INTO transactions AS t (account_id, operation, kind, status, external_id, amount,
                                   fee, end_to_end_id, counterpart, counterpart_ispb,
                                   counterpart_account_id, description, details, parent_id,
                                   created_at)
    VALUES (p_account, 'REFUND_IN', p_kind, 'PENDING', p_external_id, p_amount, 0,
            p_end_to_end_id, v_original.counterpart, v_original.counterpart_ispb,
            v_original.counterpart_account_id, p_description, p_details, p_original,
            p_created_at)
    ON CONFLICT (account_id, external_id) DO NOTHING
    RETURNING t.id, t.transaction_id, t.created_at
    INTO v_id, v_transaction_id, v_created_at;
    IF v_id IS NULL THEN
        RETURN;
    END IF;

    v_last_day := (v_original.processed_at AT TIME ZONE p_timezone)::date + p_window_days;
    IF (p_created_at AT TIME ZONE p_timezone)::date > v_last_day THEN
        RAISE EXCEPTION 'the refund window of transaction % closed on %', p_original, v_last_day
            USING ERRCODE = 'PXR02', DETAIL = v_last_day::text;
    END IF;
    PERFORM refund_fits(p_original, p_amount);
    PERFORM payout_accept('refund', p_account, v_id, p_amount, 0, p_created_at, NULL, NULL,
                          p_job_kind, p_run_at, p_max_attempts);

    id := v_id;
    transaction_id := v_transaction_id;
    created_at := v_created_at;
    RETURN NEXT;
END
$$;

-- A cash-out returned by its receiver: a CONFIRMED REFUND_OUT row (no fee), credited at
-- once, with its event (record_event(), 030_events.sql); the returns of one cash-out never
-- add up to more than it. p_ispb, the gateway's ISPB, when the return comes from another bank
-- (the sandbox's receiver): a cash-out paid to another of our accounts is then refused (PXR00,
-- DETAIL 'in_house'), since that account returns it with a refund of its own; NULL from
-- refund_settle_in_house(), which credits such a return.
CREATE FUNCTION refund_credit(
    p_account bigint, p_original bigint, p_amount bigint, p_end_to_end_id text,
    p_created_at timestamptz, p_job_kind text, p_max_runs int, p_ispb text
) RETURNS TABLE (id bigint, transaction_id uuid, created_at timestamptz, jobs bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_original transactions := refund_original(p_account, p_original, 'WITHDRAW');
    v_id bigint;
    v_transaction_id uuid;
    v_created_at timestamptz;
    v_jobs bigint;
BEGIN
    IF p_ispb IS NOT NULL AND (refund_twin(v_original, p_ispb)).id IS NOT NULL THEN
        RAISE EXCEPTION 'transaction % was paid to an account of this gateway', p_original
            USING ERRCODE = 'PXR00', DETAIL = 'in_house';
    END IF;
    INSERT INTO transactions AS t (account_id, operation, kind, status, amount, fee,
                                   end_to_end_id, counterpart, counterpart_ispb,
                                   counterpart_account_id, parent_id, created_at, processed_at)
    VALUES (p_account, 'REFUND_OUT', 'refund_out', 'CONFIRMED', p_amount, 0,
            p_end_to_end_id, v_original.counterpart, v_original.counterpart_ispb,
            v_original.counterpart_account_id, p_original, p_created_at, p_created_at)
    RETURNING t.id, t.transaction_id, t.created_at
    INTO v_id, v_transaction_id, v_created_at;
    PERFORM refund_fits(p_original, p_amount);
    PERFORM ledger_credit(p_account, p_amount, 0, v_id);
    SELECT e.jobs INTO v_jobs
    FROM record_event(p_account, 'refund_out', v_id, '{}'::jsonb, p_job_kind, p_max_runs) e;

    id := v_id;
    transaction_id := v_transaction_id;
    created_at := v_created_at;
    jobs := v_jobs;
    RETURN NEXT;
END
$$;

-- The settlement of a PENDING refund (REFUND_IN) of an internal PIX (refund_twin()): it never
-- leaves the house. In one transaction, the refund becomes CONFIRMED, its hold posted and its
-- `refund_in` event written (settle_payout(), 040_payouts.sql), and the payer's account is
-- credited with a REFUND_OUT of its WITHDRAW with the refund's own end-to-end id and its
-- `refund_out` event (refund_credit()): the money goes from one account to the other through
-- the `settlement` book, as the payment came. The sandbox's settlement-error scenarios do not
-- apply (nothing is sent to a bank), as for the internal payment itself. Should the payer's
-- WITHDRAW have less left to return than the refund (returns recorded on it before internal
-- PIX were returned in the house), the refund ends in ERROR (ORDER_REJECTED), its hold voided.
--
-- Locks, in the order every path that refunds or blocks takes them: the transaction rows (the
-- PIX, then the payer's WITHDRAW, then the refund), then the two accounts by ascending id.
--
-- handled false: not an internal PIX (nothing written; the settling bank returns it).
-- handled true: nothing for the bank to do: settled here now (status, jobs: the webhook
-- delivery jobs written), or no longer PENDING (another run settled it; jobs 0).
CREATE FUNCTION refund_settle_in_house(
    p_refund bigint, p_ispb text, p_at timestamptz, p_job_kind text, p_max_runs int
) RETURNS TABLE (handled boolean, status text, jobs bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_refund transactions;
    v_original transactions;
    v_paid_by transactions;
    v_status text;
    v_jobs bigint;
    v_credit_jobs bigint := 0;
BEGIN
    SELECT * INTO v_refund FROM transactions t
    WHERE t.id = p_refund AND t.operation = 'REFUND_IN';
    IF NOT FOUND OR v_refund.status <> 'PENDING' THEN
        handled := true;
        status := v_refund.status;
        jobs := 0;
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT * INTO v_original FROM transactions t WHERE t.id = v_refund.parent_id;
    v_paid_by := refund_twin(v_original, p_ispb);
    IF v_paid_by.id IS NULL THEN
        handled := false;
        status := v_refund.status;
        jobs := 0;
        RETURN NEXT;
        RETURN;
    END IF;

    PERFORM 1 FROM transactions t WHERE t.id = v_original.id FOR NO KEY UPDATE;
    PERFORM 1 FROM transactions t WHERE t.id = v_paid_by.id FOR NO KEY UPDATE;
    SELECT t.status INTO v_status FROM transactions t WHERE t.id = p_refund FOR NO KEY UPDATE;
    handled := true;
    IF v_status <> 'PENDING' THEN  -- another run settled it meanwhile
        status := v_status;
        jobs := 0;
        RETURN NEXT;
        RETURN;
    END IF;
    PERFORM 1 FROM accounts a
    WHERE a.id IN (v_original.account_id, v_paid_by.account_id)
    ORDER BY a.id FOR NO KEY UPDATE;

    v_status := CASE WHEN refund_left(v_paid_by.id) >= v_refund.amount THEN 'CONFIRMED'
                     ELSE 'ERROR' END;
    SELECT s.jobs INTO v_jobs
    FROM settle_payout(
        p_refund, v_status, NULL, NULL,
        CASE v_status WHEN 'ERROR' THEN 'ORDER_REJECTED' END,
        CASE v_status WHEN 'ERROR' THEN 'the payment was already returned to its payer' END,
        p_at, 'refund_in', p_job_kind, p_max_runs) s;
    IF v_status = 'CONFIRMED' THEN
        SELECT c.jobs INTO v_credit_jobs
        FROM refund_credit(v_paid_by.account_id, v_paid_by.id, v_refund.amount,
                           v_refund.end_to_end_id, p_at, p_job_kind, p_max_runs, NULL) c;
    END IF;

    status := v_status;
    jobs := coalesce(v_jobs, 0) + coalesce(v_credit_jobs, 0);
    RETURN NEXT;
END
$$;
