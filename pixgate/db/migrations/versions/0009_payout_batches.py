"""`hold_payouts()` and `settle_payouts()`: several payouts of one account in one transaction.

Every cash-out and every settlement of an account locks the account's row until its COMMIT,
one at a time, and each is a round trip, a function call and an fsync of its own. The
requests that queue for the row meanwhile now go together in the next statement
(`db.batches`): one round trip, one transaction and one fsync for all of them.

Each element runs the one-payout function (`hold_payout()`, `settle_payout()`) in a block of
its own (a subtransaction): a refused or failing element is rolled back alone and reported
in its row (`err_state`, `err_message`, `err_detail`), the others commit. Elements run in the order
given, so a later one sees the earlier ones' holds and limit usage, exactly as if they had
been sent one after the other.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from pixgate.db.migrate import execute_script

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE FUNCTION hold_payouts(
            p_account_id bigint, p_kind text[], p_external_id text[], p_amount bigint[],
            p_fee bigint[], p_pix_key text[], p_pix_key_type text[], p_description text[],
            p_details jsonb[], p_created_at timestamptz[], p_job_kind text[],
            p_run_at timestamptz[], p_fees jsonb[], p_limits bigint[],
            p_transaction_limit bigint[], p_daily_limit bigint[], p_night_limit bigint[],
            p_bucket timestamptz[], p_day_start timestamptz[], p_night_start timestamptz[]
        ) RETURNS TABLE (ord int, id bigint, transaction_id uuid, created_at timestamptz,
                         err_state text, err_message text, err_detail text)
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        BEGIN
            -- p_limits is n x 3: each element's [transaction, daily, night] limits as priced
            FOR i IN 1 .. coalesce(array_length(p_kind, 1), 0) LOOP
                ord := i;
                id := NULL; transaction_id := NULL; created_at := NULL;
                err_state := NULL; err_message := NULL; err_detail := NULL;
                BEGIN
                    SELECT h.id, h.transaction_id, h.created_at
                    INTO id, transaction_id, created_at
                    FROM hold_payout(
                        p_account_id, p_kind[i], p_external_id[i], p_amount[i], p_fee[i],
                        p_pix_key[i], p_pix_key_type[i], p_description[i], p_details[i],
                        p_created_at[i], p_job_kind[i], p_run_at[i], p_fees[i],
                        ARRAY[p_limits[i][1], p_limits[i][2], p_limits[i][3]],
                        p_transaction_limit[i], p_daily_limit[i], p_night_limit[i],
                        p_bucket[i], p_day_start[i], p_night_start[i]) h;
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE,
                                            err_message = MESSAGE_TEXT,
                                            err_detail = PG_EXCEPTION_DETAIL;
                END;
                RETURN NEXT;
            END LOOP;
        END
        $$;

        CREATE FUNCTION settle_payouts(
            p_id bigint[], p_status text[], p_end_to_end_id text[], p_counterpart jsonb[],
            p_error_code text[], p_error_message text[], p_processed_at timestamptz[],
            p_event_type text[], p_job_kind text, p_max_runs int
        ) RETURNS TABLE (ord int, account_id bigint, status text, jobs bigint,
                         err_state text, err_message text)
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        BEGIN
            FOR i IN 1 .. coalesce(array_length(p_id, 1), 0) LOOP
                ord := i;
                account_id := NULL; status := NULL; jobs := NULL;
                err_state := NULL; err_message := NULL;
                BEGIN
                    SELECT s.account_id, s.status, s.jobs INTO account_id, status, jobs
                    FROM settle_payout(
                        p_id[i], p_status[i], p_end_to_end_id[i], p_counterpart[i],
                        p_error_code[i], p_error_message[i], p_processed_at[i],
                        p_event_type[i], p_job_kind, p_max_runs) s;
                EXCEPTION WHEN OTHERS THEN
                    GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE,
                                            err_message = MESSAGE_TEXT;
                END;
                RETURN NEXT;
            END LOOP;
        END
        $$;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP FUNCTION settle_payouts(bigint[], text[], text[], jsonb[], text[], text[],
                                     timestamptz[], text[], text, int);
        DROP FUNCTION hold_payouts(bigint, text[], text[], bigint[], bigint[], text[], text[],
                                   text[], jsonb[], timestamptz[], text[], timestamptz[],
                                   jsonb[], bigint[], bigint[], bigint[], bigint[],
                                   timestamptz[], timestamptz[], timestamptz[]);
        """
    )
