-- Reads of `transactions` that the hot path makes by the hundred.

DROP FUNCTION IF EXISTS transactions_by_ids;

-- Whole rows by their primary keys, a row per key found (a key asked twice, twice). Each key
-- is looked up on its own, by the primary key (the LIMIT keeps the planner from turning the
-- lookups into a join), and the plan is kept for the session (generic): `id = ANY(...)`,
-- planned while the table is young (a new deployment's first minute, before autovacuum's
-- first ANALYZE), scanned the whole table, and the connection kept that plan until the
-- statistics changed; once the table had statistics, it was planned again for each call's
-- keys, nearly four times as long as it took to run.
CREATE FUNCTION transactions_by_ids(p_ids bigint[]) RETURNS SETOF transactions
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY
    SELECT t.* FROM unnest(p_ids) AS k (id)
    CROSS JOIN LATERAL (SELECT * FROM transactions x WHERE x.id = k.id LIMIT 1) t;
END
$$;
