"""Every dashboard form, and every address a person can mistype, says what is wrong as a
person reads it: the field's label and a plain reason, never pydantic's wording."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from pixgate.runtime import Runtime
from tests.dashboard.conftest import Browser
from tests.helpers import make_account

CPF = "52998224725"
PROBLEMS = re.compile(r'<ul class="problems" role="alert">(.*?)</ul>', re.DOTALL)
PYDANTIC_WORDING = re.compile(
    r"should (be|have)|Field required|Value error|valid (integer|UUID|decimal|number)"
    r"|unable to parse|Extra inputs|\[type=|errors\.pydantic\.dev|[a-z]+_[a-z]+: "
)
"""pydantic's phrases, and a field's snake_case name where its label belongs."""


def shown(response: httpx.Response) -> list[str]:
    """The problems the page lists, as a person reads them; none of pydantic's wording."""
    found = PROBLEMS.search(response.text)
    assert found is not None, response.text
    items = [html.unescape(li) for li in re.findall(r"<li>(.*?)</li>", found[1], re.DOTALL)]
    assert items and not any(PYDANTIC_WORDING.search(item) for item in items), items
    return items


@pytest.fixture
async def signed_in(rt: Runtime, browser: Browser) -> Browser:
    await browser.sign_in(await make_account(rt))
    return browser


def charge_form(**changes: str) -> dict[str, object]:
    return {
        "value": "10.00",
        "description": "Pedido 42",
        "payerName": "Maria",
        "payerDocument": CPF,
        "expiration": "3600",
        **changes,
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"payerDocument": "123"}, "Payer's CPF or CNPJ: must have at least 11 characters"),
        ({"payerDocument": "11111111111"}, "Payer's CPF or CNPJ: not a valid CPF or CNPJ"),
        ({"description": ""}, "Description: is required"),
        ({"description": "x" * 141}, "Description: must have at most 140 characters"),
        ({"payerName": ""}, "Payer's name: is required"),
        ({"expiration": "soon"}, "Expires after: must be a whole number"),
        ({"expiration": "10"}, "Expires after: must be at least 30"),
        ({"expiration": "45"}, "Expires after: must be at least 60 seconds for this provider"),
    ],
)
async def test_the_charge_form(signed_in: Browser, change: dict[str, str], message: str) -> None:
    response = await signed_in.post("/dashboard/charges", charge_form(**change))
    assert response.status_code == 400
    assert message in shown(response)


async def test_the_charge_form_s_amount(signed_in: Browser) -> None:
    """The amount's reasons are its own rule's (one per kind of mistake): here only that the
    form names the field by its label and says them plainly."""
    for value in ("abc", "", "0", "1.001"):
        response = await signed_in.post("/dashboard/charges", charge_form(value=value))
        assert response.status_code == 400, value
        assert all(line.startswith("Amount: ") for line in shown(response)), value


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("startDate=0", "From (date): must be an ISO 8601 date (YYYY-MM-DD)"),
        ("endDate=20261124", "To (date): must be an ISO 8601 date (YYYY-MM-DD)"),
        ("page=0", "Page: a whole number from 1 to 2147483647"),
        ("size=101", "Per page: a whole number from 1 to 100"),
        ("status=DONE", "Status: one of PENDING, CONFIRMED, ERROR"),
    ],
)
async def test_the_statement_filters(signed_in: Browser, query: str, message: str) -> None:
    response = await signed_in.get(f"/dashboard/transactions?{query}")
    assert response.status_code == 400
    assert any(line.startswith(message) for line in shown(response)), shown(response)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"url": "ftp://example.com/hook"}, "URL: "),
        ({"url": ""}, "URL: "),
        ({"eventType": "nope"}, "Event type: must be one of"),
        ({"version": "v9"}, "Payload version: must be v1 or v2"),
    ],
)
async def test_the_webhook_form(signed_in: Browser, change: dict[str, str], message: str) -> None:
    form = {"eventType": "cash_out", "url": "https://example.com/hook", **change}
    response = await signed_in.post("/dashboard/webhooks", form)
    assert response.status_code == 400
    assert any(line.startswith(message) for line in shown(response)), shown(response)


async def test_the_delivery_log_filters(signed_in: Browser) -> None:
    response = await signed_in.get("/dashboard/deliveries?status=lost&type=nope")
    assert response.status_code == 400
    lines = shown(response)
    assert any(line.startswith("Status: one of ") for line in lines), lines
    assert any(line.startswith("Event: one of ") for line in lines), lines


WEBHOOK = "The webhook's address: "


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("GET", "/dashboard/charges/x", "The charge's address: is not a valid identifier"),
        ("POST", "/dashboard/webhooks/x/deactivate", WEBHOOK + "must be a whole number"),
        ("POST", "/dashboard/webhooks/0/deactivate", WEBHOOK + "must be at least 1"),
        ("POST", "/dashboard/events/x1/resend", "The event's address: must be a whole number"),
        ("GET", "/dashboard/deliveries/x1", "The delivery's address: must be a whole number"),
        (
            "GET",
            "/dashboard/transactions/x",
            "The transaction's address: is not a valid identifier",
        ),
    ],
)
async def test_a_mistyped_address(signed_in: Browser, method: str, path: str, message: str) -> None:
    response = await (signed_in.get(path) if method == "GET" else signed_in.post(path))
    assert response.status_code == 400
    assert shown(response) == [message]


async def test_the_sign_in_form(rt: Runtime, browser: Browser) -> None:
    response = await browser.sign_in(await make_account(rt), secret="not-the-secret")
    assert response.status_code == 401
    assert "Invalid clientId or clientSecret." in html.unescape(response.text)
