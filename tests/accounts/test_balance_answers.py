"""The balance answers are written straight from the balance, without their models: each is,
byte for byte, what its model would render, for every amount a balance can hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from pixgate.accounts.schemas.balances import AccountBalances, StandardBalance
from pixgate.accounts.service.balances import Balance
from pixgate.client.calls import reader
from pixgate.core.http.responses import exact
from pixgate.core.money import to_decimal
from pixgate.core.timestamps import iso

BIGINT = 2**63 - 1
cents = st.integers(min_value=-BIGINT // 2, max_value=BIGINT // 2)
instants = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-3))]),
)
balances = st.builds(Balance, available=cents, blocked=cents, at=instants)


@given(balances)
def test_the_central_bank_answer_is_its_model_rendered(balance: Balance) -> None:
    model = AccountBalances.model_validate(
        {
            "data": [
                {
                    "event_date": iso(balance.at),
                    "balance_amount": {
                        "available": to_decimal(balance.available),
                        "blocked": to_decimal(balance.blocked),
                        "overdraft": to_decimal(0),
                    },
                }
            ]
        }
    )
    body = AccountBalances.answer(balance).body
    assert body == exact(model).body
    assert reader(AccountBalances)(bytes(body)) == model


@given(balances)
def test_the_standard_answer_is_its_model_rendered(balance: Balance) -> None:
    model = StandardBalance.model_validate(
        {
            "gross_balance": to_decimal(balance.available + balance.blocked),
            "blocked_balance": to_decimal(balance.blocked),
            "net_balance": to_decimal(balance.available),
            "consulted_at": iso(balance.at),
        }
    )
    body = StandardBalance.answer(balance).body
    assert body == exact(model).body
    assert reader(StandardBalance)(bytes(body)) == model
