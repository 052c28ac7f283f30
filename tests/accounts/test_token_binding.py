"""RFC 8705 section 3 on every route that takes a token: the bound certificate must come too.

The routes are read from the application's routers, so a new authenticated route joins the
sweep without anyone remembering to add it.
"""

from __future__ import annotations

import re

import httpx
import pytest
from fastapi.routing import APIRoute

from pixgate.accounts.routes.deps import authenticates
from pixgate.core.http.errors import Family
from pixgate.core.http.intake.routing import dependency_calls
from pixgate.routers import ROUTERS
from pixgate.runtime import Runtime
from tests.helpers import SIMPLE_BODY, assert_general_error, bearer, cert_header, make_account

# A syntactically valid value per path parameter name, so that only the token is at issue.
_PATH_VALUES = {
    "txid": "a" * 26,
    "pixKey": "123e4567-e89b-42d3-a456-426614174000",
    "transactionIdentifier": "1",
    "transactionId": "1",
    "webhook_id": "1",
    "id": "1",
}


def _authenticated_routes() -> list[tuple[str, str, Family]]:
    found = []
    for route in (route for router in ROUTERS for route in router.routes):
        if not isinstance(route, APIRoute):
            continue
        if not any(authenticates(call) for call in dependency_calls(route.dependant)):
            continue
        path = re.sub(r"\{(\w+)(:\w+)?\}", lambda m: _PATH_VALUES.get(m[1], "1"), route.path)
        family = getattr(route, "family", Family.GENERAL)
        found.extend((method, path, family) for method in sorted(route.methods))
    return found


ROUTES = _authenticated_routes()


def test_the_sweep_sees_every_family() -> None:
    paths = {path for _, path, _ in ROUTES}
    assert {"/accounts/balances", "/api/pix/cash-out", "/api/transactions", "/dict/pix"} <= paths
    assert any(path.startswith("/cob/") for path in paths)
    assert any(path.startswith("/sandbox/") for path in paths)
    assert len(ROUTES) >= 18


@pytest.mark.parametrize(("method", "path", "family"), ROUTES)
async def test_token_without_its_certificate_is_refused(
    rt: Runtime, client: httpx.AsyncClient, method: str, path: str, family: Family
) -> None:
    account = await make_account(rt, balance="100")
    token_only = {"Authorization": (await bearer(client, account))["Authorization"]}
    response = await client.request(method, path, headers=token_only, json={})
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    if family is Family.CENTRAL_BANK:
        assert set(response.json()) == SIMPLE_BODY
    elif family is Family.GENERAL:
        assert_general_error(response, 401, "UNAUTHORIZED")
    else:
        assert response.json()["code"] == "UNAUTHORIZED"
    assert "certificate" in response.json()["message"]


async def test_token_with_another_certificate_is_refused(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    mine, theirs = await make_account(rt), await make_account(rt, name="Outra")
    stolen = {
        "Authorization": (await bearer(client, mine))["Authorization"],
        "X-SSL-Client-Cert": cert_header(theirs.certificate_pem),
    }
    assert (await client.get("/accounts/balances", headers=stolen)).status_code == 401


async def test_token_with_its_certificate_is_accepted(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    account = await make_account(rt, balance="12.34")
    response = await client.get("/accounts/balances", headers=await bearer(client, account))
    assert response.status_code == 200
    assert response.json()["data"][0]["balanceAmount"]["available"] == 12.34
