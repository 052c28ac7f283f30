"""`record_event()` and `settle_payout()`: a payout's settlement in one round trip.

A settlement was BEGIN, the final state, the event, the balance move and COMMIT: five
round trips, two of them while queued for the account's row, which every cash-out of that
account waits for too. As one function called in autocommit mode it is one round trip and
one transaction. The event statement (the outbox: event, deliveries, delivery jobs) becomes
the `record_event()` function, so `db.webhooks.record_event` and the settlement share it.
The balance move and its journal entry are `ledger.journal`'s post and void, and a voided
payout gives its amount back to the limits' usage (`services.limits`), as before.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from pixgate.db.migrate import execute_script

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        """
        CREATE FUNCTION record_event(
            p_account_id bigint, p_type text, p_transaction_id bigint, p_extra jsonb,
            p_job_kind text, p_max_runs int
        ) RETURNS TABLE (id bigint, jobs bigint)
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        BEGIN
            -- PL/pgSQL, not SQL: PostgreSQL 15 parses and plans a SQL function's body on
            -- every call, a PL/pgSQL one once per session
            RETURN QUERY
            WITH ev AS (
                INSERT INTO events (account_id, type, transaction_id, data)
                SELECT p_account_id, p_type, p_transaction_id, jsonb_build_object(
                           'transaction', to_jsonb(t), 'parent', to_jsonb(p),
                           'extra', p_extra)
                FROM (SELECT 1) AS one
                LEFT JOIN transactions t ON t.id = p_transaction_id
                                        AND t.account_id = p_account_id
                LEFT JOIN transactions p ON p.id = t.parent_id
                RETURNING id, event_id, account_id, type
            ), delivery AS (
                INSERT INTO webhook_deliveries (event_id, account_id, endpoint_id, url,
                                                version, message_id)
                SELECT ev.id, ev.account_id, we.id, we.url, we.version,
                       'msg_' || replace(ev.event_id::text, '-', '') || '_' || we.id
                FROM ev JOIN webhook_endpoints we
                  ON we.account_id = ev.account_id AND we.event_type = ev.type
                 AND we.is_active
                RETURNING id
            ), job AS (
                INSERT INTO jobs (kind, args, max_attempts)
                SELECT p_job_kind, jsonb_build_object('delivery_id', delivery.id), p_max_runs
                FROM delivery
                RETURNING id
            )
            SELECT ev.id, (SELECT count(*) FROM job) FROM ev;
        END
        $$;

        CREATE FUNCTION settle_payout(
            p_id bigint, p_status text, p_end_to_end_id text, p_counterpart jsonb,
            p_error_code text, p_error_message text, p_processed_at timestamptz,
            p_event_type text, p_job_kind text, p_max_runs int
        ) RETURNS TABLE (account_id bigint, status text, jobs bigint)
        LANGUAGE plpgsql AS $$
        #variable_conflict use_column
        DECLARE
            v transactions%ROWTYPE;
            v_total bigint;
            v_entry bigint := nextval('ledger_entry_seq');
            v_jobs bigint;
        BEGIN
            UPDATE transactions t
            SET status = p_status, end_to_end_id = coalesce(t.end_to_end_id, p_end_to_end_id),
                counterpart = coalesce(p_counterpart, t.counterpart),
                error_code = p_error_code, error_message = p_error_message,
                processed_at = p_processed_at
            WHERE t.id = p_id AND t.status = 'PENDING'
            RETURNING t.* INTO v;
            IF NOT FOUND THEN
                RETURN;  -- another run already settled it
            END IF;
            SELECT e.jobs INTO v_jobs
            FROM record_event(v.account_id, p_event_type, p_id, '{}'::jsonb, p_job_kind,
                              p_max_runs) e;

            v_total := v.amount + v.fee;
            IF v.status = 'CONFIRMED' THEN
                UPDATE accounts a SET blocked = a.blocked - v_total
                WHERE a.id = v.account_id AND a.blocked >= v_total;
            ELSE
                UPDATE accounts a SET blocked = a.blocked - v_total,
                                      available = a.available + v_total
                WHERE a.id = v.account_id AND a.blocked >= v_total;
            END IF;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'blocked balance of account % is below %',
                    v.account_id, v_total;
            END IF;
            IF v.status = 'CONFIRMED' THEN
                INSERT INTO ledger_postings (entry_id, account_id, book, amount,
                                             transaction_id, memo)
                VALUES (v_entry, v.account_id, 'blocked', -v_total, p_id, 'post'),
                       (v_entry, NULL, 'settlement', v.amount, p_id, 'post'),
                       (v_entry, NULL, 'fees', v.fee, p_id, 'post');
            ELSE
                INSERT INTO ledger_postings (entry_id, account_id, book, amount,
                                             transaction_id, memo)
                VALUES (v_entry, v.account_id, 'blocked', -v_total, p_id, 'void'),
                       (v_entry, v.account_id, 'available', v_total, p_id, 'void');
                UPDATE limit_usage u SET used = u.used - v.amount
                WHERE u.account_id = v.account_id
                  AND u.bucket = to_timestamp(floor(extract(epoch FROM v.created_at) / 900)
                                              * 900);
            END IF;

            account_id := v.account_id;
            status := v.status;
            jobs := v_jobs;
            RETURN NEXT;
        END
        $$;
        """
    )


def downgrade() -> None:
    execute_script(
        """
        DROP FUNCTION settle_payout(bigint, text, text, jsonb, text, text, timestamptz, text,
                                    text, int);
        DROP FUNCTION record_event(bigint, text, bigint, jsonb, text, int);
        """
    )
