-- The outgoing limits (per transaction, per day, per night): counted and checked here only.
--
-- Limits count the PENDING and CONFIRMED outgoing (WITHDRAW) amounts, not the ERROR ones.
-- That volume is kept per quarter-hour in `limit_usage`: counted when a payment's funds are
-- held, given back when its hold is voided. The windows' starts (local midnight, 20:00) come
-- from the caller (pixgate/payouts/rules.py: they depend on the time zone setting); every
-- time zone's offset is a multiple of 15 minutes, so a window's buckets hold exactly the
-- window's payments. Counting adds the amount and reads the window's total in one step,
-- after the caller locked the account row, so two concurrent payments cannot both fit
-- under a limit that only one of them fits.

DROP FUNCTION IF EXISTS limit_bucket, limit_count, limit_check, limit_check_all, limit_give_back;

-- The quarter-hour (epoch-aligned) whose usage counts a payment created at p_at. Its body
-- is one immutable call, so PostgreSQL inlines it where it is called (extract() from a
-- timestamptz is only stable: with it, every call ran the function's own executor).
CREATE FUNCTION limit_bucket(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT date_bin('15 minutes', p_at, '1970-01-01 00:00:00+00')
$$;

-- Count p_amount as sent at p_at; the day's and the night's totals, it included (the
-- night's is the bucket's own when p_night_start is NULL: it is day time).
CREATE FUNCTION limit_count(
    p_account bigint, p_at timestamptz, p_amount bigint, p_day_start timestamptz,
    p_night_start timestamptz, OUT today bigint, OUT tonight bigint
) LANGUAGE plpgsql AS $$
DECLARE
    v_bucket timestamptz := limit_bucket(p_at);
    v_current bigint;
BEGIN
    INSERT INTO limit_usage AS u (account_id, bucket, used)
    VALUES (p_account, v_bucket, p_amount)
    ON CONFLICT (account_id, bucket) DO UPDATE SET used = u.used + EXCLUDED.used
    RETURNING u.used INTO v_current;
    SELECT v_current + coalesce(sum(u.used) FILTER (WHERE u.bucket >= p_day_start), 0),
           v_current + coalesce(sum(u.used) FILTER (WHERE u.bucket >= p_night_start), 0)
    INTO today, tonight
    FROM limit_usage u
    WHERE u.account_id = p_account
      AND u.bucket >= least(p_day_start, coalesce(p_night_start, p_day_start))
      AND u.bucket < v_bucket;
END
$$;

-- Count the payments of p_amount, sent at p_at (one quarter-hour for all), or raise the first
-- limit one of them exceeds (the count rolls back with the caller's transaction): PXL00 per
-- transaction, PXL01 daily, PXL02 nightly, with the window's total, these payments included,
-- as DETAIL. A window's total only grows, so the last payment's total decides for all.
CREATE FUNCTION limit_check_all(
    p_account bigint, p_at timestamptz, p_amount bigint[], p_transaction_limit bigint,
    p_daily_limit bigint, p_night_limit bigint, p_day_start timestamptz,
    p_night_start timestamptz
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_today bigint;
    v_tonight bigint;
    v_sum bigint := 0;
    v_amount bigint;
BEGIN
    FOREACH v_amount IN ARRAY p_amount LOOP
        IF v_amount > p_transaction_limit THEN
            RAISE EXCEPTION 'per-transaction limit exceeded' USING ERRCODE = 'PXL00';
        END IF;
        v_sum := v_sum + v_amount;
    END LOOP;
    SELECT * INTO v_today, v_tonight
    FROM limit_count(p_account, p_at, v_sum, p_day_start, p_night_start);
    IF v_today > p_daily_limit THEN
        RAISE EXCEPTION 'daily limit exceeded' USING ERRCODE = 'PXL01', DETAIL = v_today;
    END IF;
    IF p_night_start IS NOT NULL AND v_tonight > p_night_limit THEN
        RAISE EXCEPTION 'night limit exceeded' USING ERRCODE = 'PXL02', DETAIL = v_tonight;
    END IF;
END
$$;

-- One payment (limit_check_all()).
CREATE FUNCTION limit_check(
    p_account bigint, p_at timestamptz, p_amount bigint, p_transaction_limit bigint,
    p_daily_limit bigint, p_night_limit bigint, p_day_start timestamptz,
    p_night_start timestamptz
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM limit_check_all(p_account, p_at, ARRAY[p_amount], p_transaction_limit,
                            p_daily_limit, p_night_limit, p_day_start, p_night_start);
END
$$;

-- A payment sent at p_at ended in ERROR: its amount no longer counts.
CREATE FUNCTION limit_give_back(p_account bigint, p_at timestamptz, p_amount bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE limit_usage SET used = used - p_amount
    WHERE account_id = p_account AND bucket = limit_bucket(p_at);
END
$$;
