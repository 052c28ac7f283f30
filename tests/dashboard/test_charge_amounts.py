"""The dashboard's charge form takes the API's amounts: 1e10 to 1e17 answered 500 there too
(the BR Code's range was checked after validation); now a form error, and nothing made."""

from __future__ import annotations

import pytest

from pixgate.runtime import Runtime
from tests.dashboard.conftest import Browser
from tests.helpers import footprint, make_account

CPF = "52998224725"


@pytest.mark.parametrize(
    "value",
    [f"{10**exponent}" for exponent in range(10, 18)]
    + ["10000000000,00", "1e2", "１０", "١٠", "0,00", "9999999999,999"],
)
async def test_amounts_out_of_range_or_badly_written_are_form_errors(
    rt: Runtime, browser: Browser, value: str
) -> None:
    await browser.sign_in(await make_account(rt, name="東京商店"))
    before = await footprint(rt)
    response = await browser.post(
        "/dashboard/charges",
        {"value": value, "description": "Pedido", "payerName": "Maria", "payerDocument": CPF},
    )
    assert response.status_code == 400, response.text
    assert "Amount: must be" in response.text
    assert await footprint(rt) == before


async def test_the_largest_amount_makes_a_charge(rt: Runtime, browser: Browser) -> None:
    await browser.sign_in(await make_account(rt, name="東京商店"))
    response = await browser.post(
        "/dashboard/charges",
        {"value": "9999999999,99", "description": "Pedido", "payerName": "M", "payerDocument": CPF},
    )
    assert response.status_code == 303, response.text
    page = await browser.get(response.headers["location"])
    assert "Charge R$ 9.999.999.999,99" in page.text
    assert "NAO INFORMADO" in page.text
