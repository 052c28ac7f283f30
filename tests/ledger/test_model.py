"""Every use case that moves money, driven through its service in random orders, against a model.

The unit tests prove each use case alone; test_moves.py and test_refund_moves.py drive the
database functions. This machine drives the services themselves (cash-outs, QR payments of
other accounts' charges and of outside codes, cash-ins with splits paid by the sandbox payer,
cobs, DICT transfers, refunds of both families (returned in the house, to the payer's
account, when another of our accounts paid the PIX), refunds received, MED cases, limits,
the clock, and the settlement jobs) across three accounts, one of which pays fees, in orders
no one wrote by hand. Holds stay PENDING until the `run_settlements` rule drains the due jobs, so
settlements interleave with everything else.

The model, in integer cents, knows for each call whether it must succeed or raise which
domain error: amounts of 0, above the balance, above what is left to refund, above the
per-transaction or daily limit, refunds after the window, charges paid twice or expired.
A refusal must write nothing. After every step the database must agree with the model:
each account's available and blocked balances (read through `accounts.service.balances`), blocked
equal to the PENDING holds and MED blocks that make it up, what is left to refund of each
PIX, the limits' counted volume per day, nothing negative, and `ledger.service.verify.problems()`
empty (every balance equals its journal, every entry balances).

Services are async and Hypothesis's state machines are not: the machine runs each call on an
event loop of its own, with a Runtime of its own (a small pool) on the session's database,
emptied at the start of every example. The clock is a FixedClock at noon in Brasília, in the
past, so every job is due when drained and the night limit never applies; it moves by
whole days.

The machine is written by subject in tests/ledger/model_*.py; `Ledger` joins its rules.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from pixgate.core.settings import Settings
from tests.ledger.model_money import MoneyRules
from tests.ledger.model_returns import ReturnRules
from tests.ledger.model_world import own_runtime


class Ledger(MoneyRules, ReturnRules):
    """Every rule, on one model."""


def test_every_use_case_in_random_orders_keeps_the_books_equal_to_the_model(
    base_settings: Settings, database_url: str
) -> None:
    with own_runtime(base_settings, database_url) as env:

        class OnThisRuntime(Ledger):
            def __init__(self) -> None:
                super().__init__(env)

        run_state_machine_as_test(
            OnThisRuntime,
            settings=settings(
                max_examples=40,
                stateful_step_count=30,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
