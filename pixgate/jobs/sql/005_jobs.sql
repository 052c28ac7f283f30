-- Job rows: every path that enqueues a job writes it through job_enqueue(), the payout,
-- refund and event functions (040_payouts.sql, 050_refunds.sql, 030_events.sql) as well as
-- pixgate/jobs/queue.py, in the caller's transaction (the outbox), so what a job row holds is
-- decided here once. No NOTIFY: one in a writing transaction would serialise the commits of
-- the whole database, so the caller wakes the workers after its commit (pixgate/core/db/notify.py).

DROP FUNCTION IF EXISTS job_enqueue;

-- A job of p_kind due at p_run_at (NULL: now), given up after p_max_attempts attempts;
-- p_args holds the fields of the kind's arguments dataclass (pixgate/jobs/queue.py), by name.
CREATE FUNCTION job_enqueue(
    p_kind text, p_args jsonb, p_run_at timestamptz, p_max_attempts int
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO jobs (kind, args, run_at, max_attempts)
    VALUES (p_kind, p_args, coalesce(p_run_at, now()), p_max_attempts)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
