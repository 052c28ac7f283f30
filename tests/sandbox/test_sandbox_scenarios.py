"""`X-Sandbox-Scenario` on every route that takes it: an empty value is refused, and a
synchronous scenario answers only for a request that would otherwise be accepted, never in
place of the request's own 404 or 400."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from pixgate.accounts.routes.deps import takes_scenario
from pixgate.charges.service.locations import location_url
from pixgate.core.http.intake.routing import dependency_calls
from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from pixgate.sandbox.rules import SYNCHRONOUS
from tests.charges.test_cash_in import charge_body, split
from tests.charges.test_cob import cob_body
from tests.helpers import bearer, footprint, make_account
from tests.payouts.test_cash_out import order
from tests.payouts.test_cash_out_qrcode import set_fee
from tests.payouts.test_dict_transfer import transfer_body
from tests.refunds.helpers import account_with_pix, paid_by_our_account

UNKNOWN_TRANSACTION = str(uuid.UUID(int=7, version=4))
UNKNOWN_END_TO_END = "E90400888202401011200abcdefghijk"
TXID = "scenarioTxid" + "0" * 18


@dataclass(frozen=True, slots=True)
class Refused:
    """A request the route refuses for itself, and that refusal."""

    method: str
    path: str
    body: dict[str, Any]
    status: int
    code: str | None = None
    """The envelope's `code` (None in the Central-Bank family, which has none)."""
    headers: dict[str, str] | None = None


Build = Callable[[Runtime, httpx.AsyncClient, dict[str, str]], Awaitable[Refused]]


async def unknown_refund_in(rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]) -> Refused:
    path = f"/api/pix/refund-in/{UNKNOWN_TRANSACTION}"
    return Refused("POST", path, {"refundValue": "1.00"}, 404, "NOT_FOUND")


async def unknown_devolucao(rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]) -> Refused:
    return Refused("PUT", f"/pix/{UNKNOWN_END_TO_END}/devolucao/d1", {"valor": "1.00"}, 404)


async def unknown_api_pix_devolucao(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    path = f"/api/v2/pix/{UNKNOWN_END_TO_END}/devolucao/d1"
    return Refused("PUT", path, {"valor": "1.00"}, 404)


async def charge_of_no_one(rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]) -> Refused:
    """A code whose location is this gateway's, naming no charge."""
    where = location_url(rt.settings, "0" * 32).split("://", 1)[-1]
    code = brcode.encode(brcode.dynamic(where, "Loja", "Recife", 100))
    body = {"qrCode": code, "value": "1.00", "externalId": "qr-unknown"}
    return Refused("POST", "/api/pix/cash-out-qrcode", body, 400, "PIX_INVALID_QR_CODE")


async def cash_in_below_minimum(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    body = charge_body(transaction={"expirationTime": 30})
    return Refused("POST", "/api/pix/cash-in", body, 400, "PROVIDER_EXPIRATION_BELOW_MINIMUM")


async def cob_txid_in_use(
    rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
) -> Refused:
    created = await client.put(f"/cob/{TXID}", json=cob_body(), headers=headers)
    assert created.status_code == 201, created.text
    return Refused("PUT", f"/cob/{TXID}", cob_body(), 409)


async def api_pix_cob_of_a_key_not_ours(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    """`chave` (loja@example.com) is no key of the receiving account."""
    return Refused("PUT", f"/api/v2/cob/{TXID}", cob_body(), 400)


async def api_pix_post_cob_of_a_key_not_ours(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    return Refused("POST", "/api/v2/cob", cob_body(), 400)


async def cash_out_bad_document(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    return Refused("POST", "/api/pix/cash-out", order(document="123"), 400, "HTTP_ERROR")


async def unregistered_dict_key(
    rt: Runtime, client: httpx.AsyncClient, _: dict[str, str]
) -> Refused:
    headers = {"x-idempotency-key": str(uuid.uuid4())}
    return Refused("POST", "/dict/pix", transfer_body(), 422, headers=headers)


REFUSED: dict[tuple[str, str], Build] = {
    ("POST", "/api/pix/refund-in/{id}"): unknown_refund_in,
    ("PUT", "/pix/{e2eid}/devolucao/{id}"): unknown_devolucao,
    ("PUT", "/api/v2/pix/{e2eid}/devolucao/{id}"): unknown_api_pix_devolucao,
    ("POST", "/api/pix/cash-out-qrcode"): charge_of_no_one,
    ("POST", "/api/pix/cash-in"): cash_in_below_minimum,
    ("PUT", "/cob/{txid}"): cob_txid_in_use,
    ("PUT", "/api/v2/cob/{txid}"): api_pix_cob_of_a_key_not_ours,
    ("POST", "/api/v2/cob"): api_pix_post_cob_of_a_key_not_ours,
    ("POST", "/api/pix/cash-out"): cash_out_bad_document,
    ("POST", "/dict/pix"): unregistered_dict_key,
}
"""For each route that takes the header, a request it refuses by itself."""


def scenario_routes(app: FastAPI) -> set[tuple[str, str]]:
    return {
        (method, route.path_format)
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute)
        and any(takes_scenario(call) for call in dependency_calls(route.dependant))
        for method in route.methods or ()
    }


def test_every_route_taking_the_header_has_a_row(app: FastAPI) -> None:
    assert scenario_routes(app) == set(REFUSED)


async def refused_with(
    rt: Runtime, client: httpx.AsyncClient, route: tuple[str, str], scenario: str
) -> tuple[Refused, httpx.Response]:
    """The route's own refused request, sent with `scenario`; it wrote nothing."""
    headers = await bearer(client, await make_account(rt, balance="100.00"))
    refused = await REFUSED[route](rt, client, headers)
    headers |= {**(refused.headers or {}), "X-Sandbox-Scenario": scenario}
    before = await footprint(rt)
    response = await client.request(
        refused.method, refused.path, json=refused.body, headers=headers
    )
    assert await footprint(rt) == before
    return refused, response


@pytest.mark.parametrize("route", sorted(REFUSED), ids=" ".join)
@pytest.mark.parametrize("scenario", sorted(SYNCHRONOUS))
async def test_a_scenario_never_hides_the_request_s_own_error(
    rt: Runtime, client: httpx.AsyncClient, route: tuple[str, str], scenario: str
) -> None:
    refused, response = await refused_with(rt, client, route, scenario)
    assert response.status_code == refused.status, response.text
    if refused.code is not None:
        assert response.json()["code"] == refused.code


@pytest.mark.parametrize("route", sorted(REFUSED), ids=" ".join)
@pytest.mark.parametrize("value", ["", " "])
async def test_an_empty_scenario_is_refused_listing_the_allowed_ones(
    rt: Runtime, client: httpx.AsyncClient, route: tuple[str, str], value: str
) -> None:
    _, response = await refused_with(rt, client, route, value)
    assert response.status_code == 400, response.text
    body = response.json()
    # an API Pix problem says it in `detail`
    message = body.get("detail") or body["message"]
    message = message if isinstance(message, str) else message[0]
    assert message.startswith("X-Sandbox-Scenario is empty; allowed: INSUFFICIENT_FUNDS")
    assert body.get("code", "SANDBOX_SCENARIO_UNKNOWN") == "SANDBOX_SCENARIO_UNKNOWN"


class TestOnceAccepted:
    """The scenario still answers a request that would be accepted, and writes nothing."""

    @pytest.mark.parametrize("devolucao", [False, True])
    async def test_a_refund_of_a_known_pix(
        self, rt: Runtime, client: httpx.AsyncClient, devolucao: bool
    ) -> None:
        _, headers, pix = await account_with_pix(rt, client)
        if devolucao:
            path, body = f"/pix/{pix['endToEndId']}/devolucao/d1", {"valor": "1.00"}
        else:
            path, body = f"/api/pix/refund-in/{pix['transactionId']}", {"refundValue": "1.00"}
        method = "PUT" if devolucao else "POST"
        before = await footprint(rt)
        for scenario, status in [
            ("PROVIDER_UNAVAILABLE", 500),
            ("INSUFFICIENT_FUNDS", 422 if devolucao else 400),
            ("INVALID_PIX_KEY", 400),
        ]:
            headers_with = {**headers, "X-Sandbox-Scenario": scenario}
            response = await client.request(method, path, json=body, headers=headers_with)
            assert response.status_code == status, (scenario, response.text)
        assert await footprint(rt) == before

    async def test_a_payment_of_our_own_charge(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Settled in the house, it is refused inside its transaction: nothing is left."""
        paid = await paid_by_our_account(rt, client)
        charge = await client.post(
            "/api/pix/cash-in", json=charge_body(value="5.00"), headers=paid.receiver_headers
        )
        body = {"qrCode": charge.json()["pixCode"], "value": "5.00", "externalId": "qr-2"}
        before = await footprint(rt)
        headers = {**paid.payer_headers, "X-Sandbox-Scenario": "INSUFFICIENT_FUNDS"}
        response = await client.post("/api/pix/cash-out-qrcode", json=body, headers=headers)
        assert response.status_code == 400
        assert response.json()["code"] == "PIX_INSUFFICIENT_BALANCE"
        assert await footprint(rt) == before

    async def test_not_a_charge_whose_splits_exceed_the_amount_net_of_the_fee(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """The net amount needs the account's fee: checked before the bank is asked too."""
        account = await make_account(rt)
        await set_fee(rt, account.account_id, "cash_in", "1.00")
        headers = {**await bearer(client, account), "X-Sandbox-Scenario": "PROVIDER_UNAVAILABLE"}
        body = charge_body("10.00", splits=[split("95")])
        before = await footprint(rt)
        response = await client.post("/api/pix/cash-in", json=body, headers=headers)
        assert response.status_code == 400
        assert "net of the cash-in fee (9.00)" in response.json()["message"][0]
        assert await footprint(rt) == before
