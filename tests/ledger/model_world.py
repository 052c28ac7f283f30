"""The ledger model test's world (tests/ledger/test_model.py): its constants and
strategies, what the model keeps of each account, PIX, charge, case and hold, and the event
loop and Runtime the machine runs on."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, TypeVar

from hypothesis import strategies as st

from pixgate.charges.service import cash_in, charges
from pixgate.core.errors import (
    InsufficientBalance,
    InvalidPixKey,
    PixgateError,
    ProviderUnavailable,
)
from pixgate.core.labels import TransactionStatus
from pixgate.core.pix.documents import make_cpf
from pixgate.core.pix.keys import SplitKeyType
from pixgate.core.settings import Settings
from pixgate.med import service as med
from pixgate.med.rules import MedReason
from pixgate.payouts.service import dict_transfer
from pixgate.runtime import Runtime, build_runtime

T = TypeVar("T")

START = datetime(2023, 6, 1, 15, 0, tzinfo=UTC)
"""12:00 in Brasília (no night limit), long past (every job is due when drained)."""
MAX_DAYS = 200
"""How far the clock may move: it stays in the past."""
CPF = "52998224725"
HOLDER_CPF = make_cpf("123456789")
PAYER = charges.Payer(name="Pagador Externo", document=CPF)
CASH_OUT_KEY = "123e4567-e12b-42d3-a456-426614174000"
"""Nobody's key in the sandbox DICT: the settling bank pays a synthetic holder."""
DICT_KEY = "0f8e2b5a-3c4d-4e5f-8a9b-1c2d3e4f5a6b"
"""Registered in the sandbox DICT (HOLDER_CPF) at the start of every example."""
UNREGISTERED_KEY = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
OUTSIDE_KEY = "aa8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"
"""The key of the static BR Codes of another bank."""
FEE_ACCOUNT = 2
FEES = {
    "cash_out": {"fixed": "1.00", "percent": "1"},
    "cash_in": {"fixed": "0.30"},
    "dict_transfer": {"fixed": "0.50"},
}
"""The third account's fees; the other two pay none (the settings' default is zero)."""
LIMITED_ACCOUNT = 0
DEFAULT_LIMITS = (10_000_000, 50_000_000)
"""The settings' default per-transaction and daily limits, in cents."""
CASH_IN_EXPIRATION = 2 * 86400
COB_EXPIRATION = 3600
SETTLEMENT_ERROR = st.sampled_from(["ORDER_REJECTED", "SETTLEMENT_TIMEOUT"])
SYNCHRONOUS: dict[str, type[PixgateError]] = {
    "INSUFFICIENT_FUNDS": InsufficientBalance,
    "PROVIDER_UNAVAILABLE": ProviderUnavailable,
    "INVALID_PIX_KEY": InvalidPixKey,
}
SCENARIOS = st.one_of(
    st.none(), st.none(), st.none(), SETTLEMENT_ERROR, st.sampled_from(sorted(SYNCHRONOUS))
)
WHO = st.integers(0, 2)
PICK = st.integers(0, 1000)
CENTS = st.integers(1, 200_00)
MOSTLY_CENTS = st.tuples(st.sampled_from([1, 1, 1, 1, 1, 0]), CENTS).map(lambda t: t[0] * t[1])
"""An amount, 0 one time in six."""
AMOUNT = st.tuples(
    st.sampled_from(["cents", "cents", "part", "part", "edge", "zero"]),
    CENTS,
    st.integers(1, 4),
    st.integers(-1, 1),
).map(lambda t: (t[0], {"cents": t[1], "part": t[2], "edge": t[3], "zero": 0}[t[0]]))
"""An amount: ("cents", n); ("zero", 0); ("part", k): k quarters of the boundary the rule
cares about (all of the balance, what is left to refund, the limit); or ("edge", d): d cents
off it, so both sides of it are tried."""
LIMITS = st.one_of(st.none(), st.sampled_from([50_00, 150_00, 400_00]))


def cents(amount: int) -> Decimal:
    return Decimal(amount).scaleb(-2)


def pick_from(items: list[T], pick: int) -> T:
    return items[pick % len(items)]


def amount_from(spec: tuple[str, int], edge: int) -> int:
    kind, value = spec
    if kind == "part":
        return max(edge, 0) * value // 4
    if kind == "edge":
        return max(edge + value, 0)
    return value


@dataclass
class Account:
    id: int
    available: int
    blocked: int = 0
    transaction_limit: int | None = None
    daily_limit: int | None = None
    used: dict[date, int] = field(default_factory=dict)
    """The limits' counted volume per local day (the payouts not in ERROR)."""
    external_ids: list[str] = field(default_factory=list)
    transfers: dict[uuid.UUID, dict_transfer.TransferOrder] = field(default_factory=dict)
    """The DICT transfers stored, by idempotency key."""


@dataclass
class Received:
    """A PIX the account received: refundable, disputable."""

    who: int
    transaction_id: uuid.UUID
    end_to_end_id: str
    amount: int
    on: date
    refunded: int = 0
    """PENDING and CONFIRMED refunds."""
    case: Case | None = None
    """Its MED case under analysis."""
    paid_by: Sent | None = None
    """The payment of another of our accounts that paid it (a QR payment of a charge): its
    refunds are returned in the house, to that account."""

    @property
    def left(self) -> int:
        return self.amount - self.refunded


@dataclass
class Sent:
    """A payment the account sent that its receiver may return (refund_out) once CONFIRMED."""

    who: int
    transaction_id: uuid.UUID
    amount: int
    status: TransactionStatus
    returned: int = 0
    in_house: bool = False
    """It paid another of our accounts' charge: no return of it comes from another bank, only
    that account's refunds, credited when they settle."""


@dataclass
class Case:
    id: int
    who: int
    end_to_end_id: str
    original: Received | None
    blocked: int
    open: bool = True


@dataclass
class Charge:
    """A cash-in charge or a cob, and the shares of its immediate splits."""

    owner: int
    amount: int
    pix_code: str
    expires_at: datetime
    shares: list[int]
    external_id: str | None
    txid: str | None
    paid: bool = False


@dataclass
class Pending:
    """Money held until the next drain settles it: a payout, a refund, a split's share."""

    who: int
    amount: int
    fee: int
    fails: bool
    counted: date | None
    """The day whose limit usage counts it (payouts; refunds are not counted)."""
    expires_at: datetime | None = None
    """A NORM DICT transfer still queued at this time ends in ERROR."""
    sent: Sent | None = None
    refund_of: Received | None = None


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    rt: Runtime

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)


HELD = """
SELECT a.id, a.available, a.blocked,
       coalesce((SELECT sum(t.amount + t.fee) FROM transactions t
                 WHERE t.account_id = a.id AND t.status = 'PENDING'
                   AND t.operation IN ('WITHDRAW', 'REFUND_IN')), 0)
       + coalesce((SELECT sum(m.blocked_amount) FROM med_cases m
                   WHERE m.account_id = a.id AND m.status = 'RECEIVED'), 0) AS held
FROM accounts a ORDER BY a.id
"""
"""Each account's balances and the holds that make up its blocked balance."""
USED = """
SELECT account_id, (bucket AT TIME ZONE $1)::date AS day, sum(used)::bigint AS used
FROM limit_usage GROUP BY 1, 2 HAVING sum(used) <> 0
"""
LEFT = """
SELECT transaction_id, refund_left(id) AS left FROM transactions
WHERE transaction_id = ANY($1::uuid[])
"""


def _split(kind: str, value: Decimal) -> cash_in.SplitOrder:
    return cash_in.SplitOrder(
        pix_key="recebedor@example.com",
        pix_key_type=SplitKeyType.EMAIL,
        name="Recebedor",
        document=CPF,
        type="FIXED" if kind == "FIXED" else "PERCENTAGE",
        value=value,
        immediate=True,
    )


def _request(end_to_end_id: str, reason: MedReason = MedReason.REFUND_REQUEST) -> med.CaseRequest:
    cause = "SCAM" if reason is MedReason.REFUND_REQUEST else None
    return med.CaseRequest(
        end_to_end_id=end_to_end_id, reason=reason, cause=cause, description=None
    )


@contextlib.contextmanager
def own_runtime(base_settings: Settings, database_url: str) -> Iterator[Env]:
    """An event loop and a Runtime (a pool of at most 4) that live as long as the test."""
    loop = asyncio.new_event_loop()
    stack = contextlib.AsyncExitStack()
    small = base_settings.model_copy(update={"db_pool_min": 1, "db_pool_max": 4})
    try:
        rt = loop.run_until_complete(stack.enter_async_context(build_runtime(small, database_url)))
        yield Env(loop, rt)
    finally:
        loop.run_until_complete(stack.aclose())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
