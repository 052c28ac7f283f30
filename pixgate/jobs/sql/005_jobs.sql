-- Job rows: every path that enqueues a job writes it through job_enqueue(), the payout,
-- refund and event functions (040_payouts.sql, 050_refunds.sql, 030_events.sql) as well as
-- pixgate/jobs/queue.py, in the caller's transaction (the outbox), so what a job row holds is
-- decided here once. No NOTIFY: one in a writing transaction would serialise the commits of
-- the whole database, so the caller wakes the workers after its commit (pixgate/core/db/notify.py).

DROP FUNCTION IF EXISTS job_enqueue, job_enqueue_all;

-- Jobs of p_kind, one per element of p_args, due at p_run_at (NULL: now), each given up
-- after p_max_attempts attempts; p_args holds the fields of the kind's arguments dataclass
-- (pixgate/jobs/queue.py), by name. Their ids, in order.
CREATE FUNCTION job_enqueue_all(
    p_kind text, p_args jsonb[], p_run_at timestamptz[], p_max_attempts int
) RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
    v_ids bigint[];
BEGIN
    WITH added AS (
        INSERT INTO jobs (kind, args, run_at, max_attempts)
        SELECT p_kind, u.args, coalesce(u.run_at, now()), p_max_attempts
        FROM unnest(p_args, p_run_at) WITH ORDINALITY AS u(args, run_at, n)
        ORDER BY u.n
        RETURNING id
    )
    SELECT array_agg(id ORDER BY id) INTO v_ids FROM added;
    RETURN v_ids;
END
$$;

-- One job (job_enqueue_all()): its id.
CREATE FUNCTION job_enqueue(
    p_kind text, p_args jsonb, p_run_at timestamptz, p_max_attempts int
) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RETURN (job_enqueue_all(p_kind, ARRAY[p_args], ARRAY[p_run_at], p_max_attempts))[1];
END
$$;
