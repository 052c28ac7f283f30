"""The small refusals of the hostile-input review, against a real `pixgate serve`: each
answers its documented 4xx in its route's family, never the epoch, the scenario's 500 or a
partial Allow (the cases one by one: test_methods.py, test_dates.py,
test_sandbox_scenarios.py, test_amounts.py, test_json_bodies.py)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.helpers import cert_header, make_account
from tests.processes import serving

CASH_OUT_DETAILS = {
    "key": "a@b.com",
    "keyType": "EMAIL",
    "name": "Maria",
    "document": "52998224725",
}


def cash_out(value: str) -> bytes:
    """A cash-out body whose value is spelled exactly as given."""
    details = httpx.Request("POST", "/", json=CASH_OUT_DETAILS).content.decode()
    external_id = uuid.uuid4().hex
    return f'{{"value": {value}, "externalId": "{external_id}", "details": {details}}}'.encode()


# (method, path, extra headers, raw JSON body or None, status, code or None)
CASES: list[tuple[str, str, dict[str, str], bytes | None, int, str | None]] = [
    *[
        ("GET", path, {}, None, 400, "HTTP_ERROR")
        for path in (
            "/api/transactions?startDate=0",
            "/api/transactions?startDate=-1&endDate=2026-11-25",
            "/api/med?startDate=1700000000",
            "/api/events?startDate=1e20",
        )
    ],
    ("POST", "/api/pix/cash-out", {"X-Sandbox-Scenario": ""}, cash_out('"1.00"'), 400, None),
    (
        "POST",
        "/api/pix/refund-in/3f2b8c1e-8d7a-4c2e-9f10-6a5b4c3d2e1f",
        {"X-Sandbox-Scenario": "PROVIDER_UNAVAILABLE"},
        b'{"refundValue": "1.00"}',
        404,
        None,
    ),
    *[
        ("POST", "/api/pix/cash-out", {}, cash_out(value), 400, "PIX_INVALID_AMOUNT")
        for value in (
            '"1e2"',
            '"１０"',
            '"١٠"',
            '" 10"',
            '"1_000"',
            '".5"',
            '"10."',
            "1.0000000000000000000001",
            "1e17",
        )
    ],
]


@pytest.fixture
async def account(rt: Runtime) -> accounts.NewAccount:
    return await make_account(rt, balance="1000")


@pytest.fixture
async def other(rt: Runtime) -> accounts.NewAccount:
    return await make_account(rt, name="Outra Loja")


def test_refusals_through_a_real_server(account: accounts.NewAccount, database_url: str) -> None:
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    credentials = {"clientId": account.client_id, "clientSecret": account.client_secret}
    with serving(database_url) as base, httpx.Client(base_url=base) as client:
        token = client.post("/api/auth/token", headers=certificate, json=credentials)
        signed_in = {**certificate, "Authorization": f"Bearer {token.json()['access_token']}"}
        for method, path, extra, body, status, code in CASES:
            headers = signed_in | extra | {"Content-Type": "application/json"}
            response = client.request(method, path, headers=headers, content=body)
            case = (method, path, extra, body)
            assert response.status_code == status, (case, response.text)
            answer: dict[str, Any] = response.json()
            assert answer["statusCode"] == status, case
            if code is not None:
                assert answer["code"] == code, (case, answer)
        options = client.options("/cob/x", headers=signed_in)
        assert options.status_code == 405
        assert options.headers["allow"] == "GET, HEAD, PATCH, PUT"
        # HEAD through uvicorn: the GET's status and length, no body, and the keep-alive
        # connection still frames the next answer right.
        head = client.head("/api/balance", headers=signed_in)
        assert head.status_code == 200 and head.content == b""
        got = client.get("/api/balance", headers=signed_in)
        assert head.headers["content-length"] == got.headers["content-length"]
        balance = got.json()
        assert balance["netBalance"] == 1000 and balance["blockedBalance"] == 0


def test_a_foreign_certificate_does_not_tell_which_clientids_exist(
    account: accounts.NewAccount, other: accounts.NewAccount, database_url: str
) -> None:
    """An existing clientId with another account's certificate (and a wrong secret) answers
    as an unknown clientId does, through a real server."""
    foreign = {"X-SSL-Client-Cert": cert_header(other.certificate_pem)}
    with serving(database_url) as base, httpx.Client(base_url=base) as client:
        answers = [
            client.post(
                "/api/auth/token",
                headers=foreign,
                json={"clientId": client_id, "clientSecret": "not-the-secret-0123456789"},
            )
            for client_id in (account.client_id, str(uuid.uuid4()))
        ]
    existing, unknown = (answer.json() for answer in answers)
    assert [answer.status_code for answer in answers] == [401, 401]
    assert existing["code"] == unknown["code"] == "PUB_INVALID_CREDENTIALS"
    varying = {"timestamp", "errorId"}
    assert {k: v for k, v in existing.items() if k not in varying} == {
        k: v for k, v in unknown.items() if k not in varying
    }
