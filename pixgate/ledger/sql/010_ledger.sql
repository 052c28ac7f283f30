-- The ledger's balance moves: each rule of money is written here once. The payout
-- functions (040_payouts.sql) and pixgate/ledger/queries/journal.py call these; nothing else
-- updates `accounts.available` or `accounts.blocked`.
--
-- A customer account has two books, `available` and `blocked`; system books have no
-- account: `settlement` (the world outside, through the settling bank), `fees` (our
-- revenue), `sandbox_funding` (seeded sandbox money). Every move updates the cached
-- balances and writes one journal entry whose postings sum to zero, in the caller's
-- transaction; `pixgate ledger verify` checks both.
--
-- An account's total (available + blocked) never passes the largest bigint: money arrives
-- only through ledger_add, which refuses a credit past it, so the moves between the two
-- books (hold, void) can never overflow either. Like any sum PostgreSQL cannot store, the
-- refusal is SQLSTATE 22003 (numeric_value_out_of_range), which the API answers as a 400.

DROP FUNCTION IF EXISTS ledger_between_books, ledger_add, ledger_hold, ledger_hold_all, ledger_post, ledger_post_all, ledger_void, ledger_void_all, ledger_credit, ledger_fund;

-- The journal of moves between an account's two books: one entry per payment, p_amount of
-- it out of p_from and into p_to. The caller moves the cached balances.
CREATE FUNCTION ledger_between_books(
    p_account bigint, p_from text, p_to text, p_amount bigint[], p_transaction bigint[],
    p_memo text
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    WITH entry AS MATERIALIZED (
        SELECT nextval('ledger_entry_seq') AS id, u.amount, u.t
        FROM unnest(p_amount, p_transaction) WITH ORDINALITY AS u(amount, t, n)
        ORDER BY u.n
    )
    INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
    SELECT entry.id, p_account, p.book, p.amount, entry.t, p_memo
    FROM entry CROSS JOIN LATERAL (
        VALUES (p_from, -entry.amount), (p_to, entry.amount)
    ) AS p(book, amount);
END
$$;

-- p_amount more in the account's available balance, or 22003 when its total would pass the
-- largest bigint (nothing written).
CREATE FUNCTION ledger_add(p_account bigint, p_amount bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE accounts SET available = available + p_amount
    WHERE id = p_account AND available::numeric + blocked + p_amount <= 9223372036854775807;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the balance of account % cannot take % more cents', p_account, p_amount
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
END
$$;

-- available -> blocked for payments of one account, guarded: concurrent holds serialise on
-- the account row and none can overdraw. p_amount holds each payment's total (one journal
-- entry each); the row is moved once for all of them, or not at all. The account's row as
-- the hold left it (locked until the caller commits), so a caller can check the terms it
-- priced with at no extra read; NULL, and nothing written, when available is below the sum.
CREATE FUNCTION ledger_hold_all(p_account bigint, p_amount bigint[], p_transaction bigint[])
RETURNS accounts LANGUAGE plpgsql AS $$
DECLARE
    v_account accounts;
    v_total numeric := (SELECT sum(a) FROM unnest(p_amount) AS u(a));
BEGIN
    UPDATE accounts SET available = available - v_total, blocked = blocked + v_total
    WHERE id = p_account AND available >= v_total
    RETURNING * INTO v_account;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM ledger_between_books(p_account, 'available', 'blocked', p_amount, p_transaction,
                                 'hold');
    RETURN v_account;
END
$$;

-- One payment's hold (ledger_hold_all()).
CREATE FUNCTION ledger_hold(p_account bigint, p_amount bigint, p_transaction bigint)
RETURNS accounts LANGUAGE plpgsql AS $$
BEGIN
    RETURN ledger_hold_all(p_account, ARRAY[p_amount], ARRAY[p_transaction]);
END
$$;

-- Held outgoing payments of one account leave: each one's amount + fee out of blocked, its
-- amount to p_counter_book (the settling bank, or another account's credit), its fee to our
-- revenue; one journal entry each, and one update of the account's row for all of them (a
-- batch of settlements, 040_payouts.sql, moves the row once).
CREATE FUNCTION ledger_post_all(
    p_account bigint, p_amount bigint[], p_fee bigint[], p_transaction bigint[],
    p_counter_book text DEFAULT 'settlement'
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_total numeric := (SELECT sum(a + f) FROM unnest(p_amount, p_fee) AS u(a, f));
BEGIN
    UPDATE accounts SET blocked = blocked - v_total
    WHERE id = p_account AND blocked >= v_total;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'blocked balance of account % is below %', p_account, v_total;
    END IF;
    WITH entry AS MATERIALIZED (
        SELECT nextval('ledger_entry_seq') AS id, u.a, u.f, u.t
        FROM unnest(p_amount, p_fee, p_transaction) WITH ORDINALITY AS u(a, f, t, n)
        ORDER BY u.n
    )
    INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
    SELECT entry.id, p.account_id, p.book, p.amount, entry.t, 'post'
    FROM entry CROSS JOIN LATERAL (
        VALUES (p_account, 'blocked', -(entry.a + entry.f)), (NULL, p_counter_book, entry.a),
               (NULL, 'fees', entry.f)
    ) AS p(account_id, book, amount);
END
$$;

-- One held outgoing payment leaves (ledger_post_all()).
CREATE FUNCTION ledger_post(
    p_account bigint, p_amount bigint, p_fee bigint, p_transaction bigint,
    p_counter_book text DEFAULT 'settlement'
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_post_all(p_account, ARRAY[p_amount], ARRAY[p_fee], ARRAY[p_transaction],
                            p_counter_book);
END
$$;

-- Holds of one account given back: blocked -> available (the payments failed), one journal
-- entry each and one update of the account's row for all of them.
CREATE FUNCTION ledger_void_all(p_account bigint, p_total bigint[], p_transaction bigint[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_total numeric := (SELECT sum(t) FROM unnest(p_total) AS u(t));
BEGIN
    UPDATE accounts SET blocked = blocked - v_total, available = available + v_total
    WHERE id = p_account AND blocked >= v_total;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'blocked balance of account % is below %', p_account, v_total;
    END IF;
    PERFORM ledger_between_books(p_account, 'blocked', 'available', p_total, p_transaction,
                                 'void');
END
$$;

-- One hold given back (ledger_void_all()).
CREATE FUNCTION ledger_void(p_account bigint, p_total bigint, p_transaction bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM ledger_void_all(p_account, ARRAY[p_total], ARRAY[p_transaction]);
END
$$;

-- Money received: the account gets amount - fee, we keep the fee.
CREATE FUNCTION ledger_credit(
    p_account bigint, p_amount bigint, p_fee bigint, p_transaction bigint
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_entry bigint := nextval('ledger_entry_seq');
BEGIN
    PERFORM ledger_add(p_account, p_amount - p_fee);
    INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
    VALUES (v_entry, NULL, 'settlement', -p_amount, p_transaction, 'credit'),
           (v_entry, p_account, 'available', p_amount - p_fee, p_transaction, 'credit'),
           (v_entry, NULL, 'fees', p_fee, p_transaction, 'credit');
END
$$;

-- Sandbox money from nowhere, kept honest by the `sandbox_funding` book.
CREATE FUNCTION ledger_fund(p_account bigint, p_amount bigint, p_memo text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_entry bigint := nextval('ledger_entry_seq');
BEGIN
    PERFORM ledger_add(p_account, p_amount);
    INSERT INTO ledger_postings (entry_id, account_id, book, amount, transaction_id, memo)
    VALUES (v_entry, p_account, 'available', p_amount, NULL, p_memo),
           (v_entry, NULL, 'sandbox_funding', -p_amount, NULL, p_memo);
END
$$;
