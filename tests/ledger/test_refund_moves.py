"""The refund and MED database functions (refund_create, refund_credit, med_take_in,
med_release; settle_payout for the refunds' settlement) driven in random orders, as
test_moves.py drives the ledger's: after each move the balances equal a model, what is left
to refund of each PIX equals the model's, and no PIX has PENDING + CONFIRMED refunds above
its amount; after each sequence the journal agrees with the balances (verify)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pixgate.charges.service import charges
from pixgate.core.counterparts import Counterpart
from pixgate.core.db.pool import Connection
from pixgate.core.errors import InsufficientBalance, RefundAmountExceeded
from pixgate.core.ids import new_end_to_end_id
from pixgate.jobs.queue import DELIVER_WEBHOOK
from pixgate.ledger.service import verify
from pixgate.med import queries as med_rows
from pixgate.med.rules import AnalysisResult, Bank, MedStatus
from pixgate.refunds import service as refunds
from pixgate.refunds.queries import refunds as refund_rows
from pixgate.refunds.rules import Natureza, RefundKind
from pixgate.runtime import Runtime
from tests.builders import insert_transactions
from tests.helpers import make_account

PAYER_BANK = "60701190"
PAYER = Counterpart(
    name="Pagador",
    document="52998224725",
    ispb=PAYER_BANK,
    bank_name="Banco do Pagador",
    bank_code="",
    branch="0001",
    account_number="123456",
)
AMOUNTS = st.integers(min_value=1, max_value=10_000)
PICK = st.integers(0, 3)
START = [("receive", 10_000), ("receive", 3_000), ("send", 5_000)]
"""Every sequence starts with PIX to refund, take in and return."""
MOVES = st.lists(
    st.one_of(
        st.tuples(st.just("receive"), AMOUNTS),
        st.tuples(st.just("send"), AMOUNTS),
        st.tuples(st.just("spend"), AMOUNTS),
        st.tuples(st.just("refund"), PICK, AMOUNTS),
        st.tuples(st.just("return"), PICK, AMOUNTS),
        st.tuples(st.just("settle"), PICK, st.booleans()),
        st.tuples(st.just("take_in"), PICK),
        st.tuples(st.just("release"), PICK, st.booleans()),
    ),
    min_size=10,
    max_size=25,
)


@dataclass
class Original:
    """A PIX received (PAYMENT) or sent (WITHDRAW), and what its refunds that count took."""

    id: int
    amount: int
    operation: str
    refunded: int = 0

    @property
    def left(self) -> int:
        return self.amount - self.refunded


@dataclass
class Model:
    available: int = 0
    blocked: int = 0
    originals: list[Original] = field(default_factory=list)
    pending: list[tuple[int, Original, int]] = field(default_factory=list)
    """(refund id, its original, amount) of each refund held and not yet settled."""
    cases: list[tuple[int, Original, int]] = field(default_factory=list)
    """(case id, its PIX, amount blocked) of each case under analysis."""

    def received(self) -> list[Original]:
        return [o for o in self.originals if o.operation == "PAYMENT"]

    def sent(self) -> list[Original]:
        return [o for o in self.originals if o.operation == "WITHDRAW"]

    def hold(self, amount: int) -> None:
        self.available -= amount
        self.blocked += amount


def pick(items: list[Any], index: int) -> Any:
    return items[index % len(items)] if items else None


async def _refund(
    rt: Runtime, conn: Connection, account_id: int, model: Model, pix: Original, amount: int
) -> None:
    """refund_create(): refused when more than is left, or than is available; else held."""
    now = rt.clock.now()
    new = refund_rows.NewRefund(
        account_id=account_id,
        original_id=pix.id,
        kind=RefundKind.REFUND_IN,
        external_id=uuid.uuid4().hex,
        amount=amount,
        end_to_end_id=new_end_to_end_id(rt.settings.ispb, now, "D"),
        description=None,
        natureza=Natureza.ORIGINAL,
        created_at=now,
        run_at=now,
        window_days=None,
        timezone=rt.settings.timezone,
        details={},
    )
    if amount > pix.left:
        with pytest.raises(RefundAmountExceeded):
            await refund_rows.create(conn, new)
    elif amount > model.available:
        with pytest.raises(InsufficientBalance):
            await refund_rows.create(conn, new)
    else:
        made = await refund_rows.create(conn, new)
        assert made is not None and made.status == "PENDING"
        pix.refunded += amount
        model.hold(amount)
        model.pending.append((made.id, pix, amount))


async def _apply(
    rt: Runtime, conn: Connection, account_id: int, model: Model, move: tuple[Any, ...]
) -> None:
    kind, now = move[0], rt.clock.now()
    if kind == "receive":
        async with conn.transaction():
            received = await charges.receive(
                conn,
                rt.settings,
                account_id,
                move[1],
                payer=PAYER,
                end_to_end_id=new_end_to_end_id(PAYER_BANK, now),
                at=now,
            )
        model.available += move[1]
        model.originals.append(Original(received.id, move[1], "PAYMENT"))
    elif kind == "send":  # a cash-out already settled: the original a receiver returns
        [sent] = await insert_transactions(
            rt, account_id, 1, newest=now, amount=move[1], prefix=uuid.uuid4().hex
        )
        model.originals.append(Original(sent, move[1], "WITHDRAW"))
    elif kind == "spend" and move[1] <= model.available:  # money paid out meanwhile
        async with conn.transaction():
            await conn.execute("SELECT ledger_hold($1, $2, NULL)", account_id, move[1])
            await conn.execute("SELECT ledger_post($1, $2, 0, NULL)", account_id, move[1])
        model.available -= move[1]
    elif kind == "refund" and model.received():
        await _refund(rt, conn, account_id, model, pick(model.received(), move[1]), move[2])
    elif kind == "return" and model.sent():
        cash_out, amount = pick(model.sent(), move[1]), move[2]
        returned = refund_rows.credit_return(
            conn,
            account_id,
            cash_out.id,
            amount=amount,
            end_to_end_id=new_end_to_end_id(PAYER_BANK, now, "D"),
            at=now,
            ispb=rt.settings.ispb,
        )
        if amount > cash_out.left:
            with pytest.raises(RefundAmountExceeded):
                await returned
        else:
            assert (await returned).status == "CONFIRMED"
            cash_out.refunded += amount
            model.available += amount
    elif kind == "settle" and model.pending:
        refund_id, pix, amount = model.pending.pop(move[1] % len(model.pending))
        status = "CONFIRMED" if move[2] else "ERROR"
        settled = await conn.fetchrow(
            "SELECT * FROM settle_payout($1, $2, NULL, NULL, $3, NULL, $4, 'refund_in', $5, $6)",
            refund_id,
            status,
            None if move[2] else "ORDER_REJECTED",
            now,
            DELIVER_WEBHOOK.name,
            DELIVER_WEBHOOK.max_attempts,
        )
        assert settled is not None and settled["status"] == status
        model.blocked -= amount
        if not move[2]:
            model.available += amount
            pix.refunded -= amount
    elif kind == "take_in" and model.received():
        await _take_in(rt, conn, account_id, model, pick(model.received(), move[1]))
    elif kind == "release" and model.cases:
        await _release(rt, conn, account_id, model, move[1], approve=move[2])


async def _take_in(
    rt: Runtime, conn: Connection, account_id: int, model: Model, pix: Original
) -> None:
    """med_take_in(): what is left of the PIX, up to the available balance, blocked."""
    async with conn.transaction():
        end_to_end_id = await conn.fetchval(
            "SELECT end_to_end_id FROM transactions WHERE id = $1", pix.id
        )
        case_id = await med_rows.insert(
            conn,
            med_rows.NewCase(
                account_id=account_id,
                end_to_end_id=end_to_end_id,
                cause=None,
                description=None,
                requesting_bank=Bank(ispb=PAYER_BANK, name=None),
                contested_bank=Bank(ispb=rt.settings.ispb, name=None),
                original_transaction_id=pix.id,
                at=rt.clock.now(),
            ),
        )
        if any(case_pix is pix for _, case_pix, _ in model.cases):
            assert case_id is None  # one case at a time per PIX
            return
        assert case_id is not None
        blocked = await med_rows.take_in(conn, case_id, rt.clock.now())
    assert blocked == max(min(pix.left, model.available), 0)
    model.hold(blocked)
    model.cases.append((case_id, pix, blocked))


async def _release(
    rt: Runtime, conn: Connection, account_id: int, model: Model, index: int, *, approve: bool
) -> None:
    """med_release(), and on approval the refund of the released block (as med.service
    does, in the same transaction)."""
    case_id, pix, blocked = model.cases.pop(index % len(model.cases))
    result = AnalysisResult.APPROVED if approve else AnalysisResult.REJECTED
    async with conn.transaction():
        released = await med_rows.release(
            conn,
            case_id,
            status=MedStatus.ANALYZED,
            reason=None,
            result=result,
            details=None,
            at=rt.clock.now(),
        )
        assert released == blocked
        model.available += blocked
        model.blocked -= blocked
        if approve and released > 0:
            refund_id = await refunds.return_for_med(
                conn,
                rt,
                account_id,
                original_id=pix.id,
                amount=released,
                nature=Natureza.MED_FRAUDE,
                case_id=case_id,
            )
            amount = min(released, pix.left)
            assert (refund_id is None) == (amount == 0)
            if refund_id is not None:
                pix.refunded += amount
                model.hold(amount)
                model.pending.append((refund_id, pix, amount))


async def _check(conn: Connection, account_id: int, model: Model) -> None:
    row = await conn.fetchrow("SELECT available, blocked FROM accounts WHERE id = $1", account_id)
    assert row is not None
    assert (row["available"], row["blocked"]) == (model.available, model.blocked)
    counted = await conn.fetch(
        """
        SELECT o.id, o.amount, refund_left(o.id) AS left,
               coalesce(sum(r.amount) FILTER (WHERE r.status IN ('PENDING', 'CONFIRMED')), 0)
                   AS refunded
        FROM transactions o LEFT JOIN transactions r ON r.parent_id = o.id
        WHERE o.account_id = $1 AND o.operation IN ('PAYMENT', 'WITHDRAW')
        GROUP BY o.id ORDER BY o.id
        """,
        account_id,
    )
    assert all(0 <= r["refunded"] <= r["amount"] for r in counted), counted
    assert [(r["id"], r["left"]) for r in counted] == [
        (o.id, o.left) for o in sorted(model.originals, key=lambda o: o.id)
    ]


@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(moves=MOVES)
async def test_random_refund_and_med_moves_keep_the_books_and_the_refundable_balance(
    rt: Runtime, moves: list[tuple[Any, ...]]
) -> None:
    account_id = (await make_account(rt)).account_id
    model = Model()
    async with rt.db.connection() as conn:
        for move in [*START, *moves]:
            await _apply(rt, conn, account_id, model, move)
            await _check(conn, account_id, model)
        assert await verify.problems(conn) == []
