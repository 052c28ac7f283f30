-- MED cases' balance moves: the block taken when a case is taken in, given back when the
-- case ends. Both are the ledger's hold and void (010_ledger.sql), journalled against the
-- disputed PIX; an approved case's refund is then held by refund_create (050_refunds.sql)
-- in the same transaction, so the money never sits in `available` in between.

-- Rows are locked FOR NO KEY UPDATE, never FOR UPDATE: opening a case first inserts a row
-- whose foreign keys take a key-share lock on the account and the PIX, which FOR UPDATE
-- waits for, so two cases opened at once on one account would each wait for the other's.

DROP FUNCTION IF EXISTS med_take_in, med_release;

-- An OPEN case of a PIX the account received becomes RECEIVED: what is left to refund of
-- that PIX, up to the available balance, moves from available to blocked. Locks the PIX's
-- row first, as a refund does, so the two serialise and see each other's amounts. Returns
-- the amount blocked (0 when nothing was available, or the case was not OPEN).
CREATE FUNCTION med_take_in(p_case bigint, p_at timestamptz) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v med_cases;
    v_left bigint;
    v_available bigint;
    v_amount bigint;
BEGIN
    SELECT * INTO v FROM med_cases WHERE id = p_case FOR NO KEY UPDATE;
    IF NOT FOUND OR v.status <> 'OPEN' OR v.original_transaction_id IS NULL THEN
        RETURN 0;
    END IF;
    PERFORM 1 FROM transactions WHERE id = v.original_transaction_id FOR NO KEY UPDATE;
    v_left := refund_left(v.original_transaction_id);
    SELECT available INTO v_available FROM accounts WHERE id = v.account_id FOR NO KEY UPDATE;
    v_amount := greatest(least(v_left, v_available), 0);
    IF v_amount > 0 THEN
        PERFORM ledger_hold(v.account_id, v_amount, v.original_transaction_id);
    END IF;
    UPDATE med_cases SET status = 'RECEIVED', blocked_amount = v_amount, updated_at = p_at
    WHERE id = p_case;
    RETURN v_amount;
END
$$;

-- A case leaves analysis (ANALYZED or CANCELLED): its block, if any, back to available.
-- Returns the amount released; 0, and nothing changed, when the case had already ended.
-- The PIX's row stays locked until the caller commits.
CREATE FUNCTION med_release(
    p_case bigint, p_status text, p_reason text, p_result text, p_details text,
    p_at timestamptz
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v med_cases;
BEGIN
    SELECT * INTO v FROM med_cases WHERE id = p_case FOR NO KEY UPDATE;
    IF NOT FOUND OR v.status NOT IN ('OPEN', 'RECEIVED') THEN
        RETURN 0;
    END IF;
    -- the PIX before the account, as a refund locks them: an approval's refund of this PIX
    -- then counts what is left under the lock taken here, and no refund can deadlock it
    PERFORM 1 FROM transactions WHERE id = v.original_transaction_id FOR NO KEY UPDATE;
    IF v.status = 'RECEIVED' AND v.blocked_amount > 0 THEN
        PERFORM ledger_void(v.account_id, v.blocked_amount, v.original_transaction_id);
    END IF;
    UPDATE med_cases
    SET status = p_status, reason = coalesce(p_reason, reason), analysis_result = p_result,
        analysis_details = p_details, updated_at = p_at
    WHERE id = p_case;
    RETURN CASE WHEN v.status = 'RECEIVED' THEN v.blocked_amount ELSE 0 END;
END
$$;
