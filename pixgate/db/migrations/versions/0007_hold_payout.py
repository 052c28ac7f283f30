"""`hold_payout()`: a payout's PENDING row, settlement job, hold and limit count in one call.

Sent as separate statements, a cash-out is seven round trips (BEGIN, account, insert, job,
hold, limit usage, COMMIT), and round trips are the largest single share of the API
process's CPU per cash-out. As one function called in autocommit mode it is one round trip
and one transaction: a refusal RAISEs, which rolls everything back. The checks are the ones
`services.limits` and `ledger.journal` make, in the same order and with the same locks
(docs/performance.md, "Cash-out and settlement as database functions").

Errors (SQLSTATE, mapped by `db.payments`):
- PXT01: the account's fees or limits are not the ones the caller priced the payout with;
- PXB01: available balance below amount + fee;
- PXL00: above the per-transaction limit;
- PXL01 / PXL02: the daily / nightly limit would be exceeded (DETAIL: the total, it included).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from pixgate.db.migrate import execute_script

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE FUNCTION hold_payout(
            p_account_id bigint, p_kind text, p_external_id text, p_amount bigint,
            p_fee bigint, p_pix_key text, p_pix_key_type text, p_description text,
            p_details jsonb, p_created_at timestamptz, p_job_kind text, p_run_at timestamptz,
            p_fees jsonb, p_limits bigint[], p_transaction_limit bigint, p_daily_limit bigint,
            p_night_limit bigint,
            p_bucket timestamptz, p_day_start timestamptz, p_night_start timestamptz
        ) RETURNS TABLE (id bigint, transaction_id uuid, created_at timestamptz)
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v_id bigint;
            v_transaction_id uuid;
            v_created_at timestamptz;
            v_total bigint := p_amount + p_fee;
            v_entry bigint;
            v_current bigint;
            v_today bigint;
            v_tonight bigint;
            v_held boolean;
        BEGIN
            INSERT INTO transactions AS t (account_id, operation, kind, status, external_id,
                                           amount, fee, pix_key, pix_key_type, description,
                                           details, created_at)
            VALUES (p_account_id, 'WITHDRAW', p_kind, 'PENDING', p_external_id, p_amount,
                    p_fee, p_pix_key, p_pix_key_type, p_description, p_details, p_created_at)
            ON CONFLICT (account_id, external_id) DO NOTHING
            RETURNING t.id, t.transaction_id, t.created_at
            INTO v_id, v_transaction_id, v_created_at;
            IF v_id IS NULL THEN
                RETURN;  -- a reused externalId: nothing written, the caller explains
            END IF;

            INSERT INTO jobs (kind, args, run_at, max_attempts)
            VALUES (p_job_kind, jsonb_build_object('transaction_id', v_id), p_run_at, 25);

            UPDATE accounts a SET available = a.available - v_total,
                                  blocked = a.blocked + v_total
            WHERE a.id = p_account_id AND a.available >= v_total
              AND a.fees = p_fees
              AND ARRAY[a.transaction_limit, a.daily_limit, a.night_limit]
                  IS NOT DISTINCT FROM p_limits;
            v_held := FOUND;
            IF v_held THEN
                v_entry := nextval('ledger_entry_seq');
                INSERT INTO ledger_postings (entry_id, account_id, book, amount,
                                             transaction_id, memo)
                VALUES (v_entry, p_account_id, 'available', -v_total, v_id, 'hold'),
                       (v_entry, p_account_id, 'blocked', v_total, v_id, 'hold');
            ELSIF NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p_account_id
                              AND a.fees = p_fees
                              AND ARRAY[a.transaction_limit, a.daily_limit, a.night_limit]
                                  IS NOT DISTINCT FROM p_limits) THEN
                RAISE EXCEPTION 'account terms changed' USING ERRCODE = 'PXT01';
            END IF;

            IF p_amount > p_transaction_limit THEN
                RAISE EXCEPTION 'per-transaction limit exceeded' USING ERRCODE = 'PXL00';
            END IF;
            INSERT INTO limit_usage AS u (account_id, bucket, used)
            VALUES (p_account_id, p_bucket, p_amount)
            ON CONFLICT (account_id, bucket) DO UPDATE SET used = u.used + EXCLUDED.used
            RETURNING u.used INTO v_current;
            SELECT v_current + coalesce(sum(u.used) FILTER (WHERE u.bucket >= p_day_start), 0),
                   v_current + coalesce(sum(u.used) FILTER (WHERE u.bucket >= p_night_start), 0)
            INTO v_today, v_tonight
            FROM limit_usage u
            WHERE u.account_id = p_account_id
              AND u.bucket >= least(p_day_start, coalesce(p_night_start, p_day_start))
              AND u.bucket < p_bucket;
            IF v_today > p_daily_limit THEN
                RAISE EXCEPTION 'daily limit exceeded' USING ERRCODE = 'PXL01', DETAIL = v_today;
            END IF;
            IF p_night_start IS NOT NULL AND v_tonight > p_night_limit THEN
                RAISE EXCEPTION 'night limit exceeded' USING ERRCODE = 'PXL02',
                    DETAIL = v_tonight;
            END IF;
            IF NOT v_held THEN  -- after the limits, which a refused payment reports first
                RAISE EXCEPTION 'available balance is less than amount + fee'
                    USING ERRCODE = 'PXB01';
            END IF;

            id := v_id;
            transaction_id := v_transaction_id;
            created_at := v_created_at;
            RETURN NEXT;
        END
        $$;
        """
    )


def downgrade() -> None:
    execute_script(
        "DROP FUNCTION hold_payout(bigint, text, text, bigint, bigint, text, text, text, jsonb, "
        "timestamptz, text, timestamptz, jsonb, bigint[], bigint, bigint, bigint, timestamptz, "
        "timestamptz, timestamptz)"
    )
