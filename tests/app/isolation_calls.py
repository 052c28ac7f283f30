"""The isolation sweep's table vocabulary: a call B makes (`Call`), a row of the table
(`Row`), the checks of an answer, and B's request itself (`call_as_b`)."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from pixgate.core.pix.brcode import encode, static
from tests.app.isolation_world import B_BALANCE, B_NAME, CPF, World
from tests.helpers import cert_header

# --- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    params: dict[str, str] = field(default_factory=dict)
    """Path parameters: the row's template is filled with these."""
    query: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    who: str = "b"
    """b: B's token and certificate; cert: B's certificate only; anonymous: nothing;
    session: B signed in to the dashboard (forms carry its CSRF token); login: the dashboard's
    sign-in form, signed out."""
    form: dict[str, str] | None = None
    """A form body (the dashboard's POSTs)."""


Check = Callable[[World, httpx.Response], Awaitable[None]]


@dataclass(frozen=True)
class Row:
    id: str
    method: str
    path: str
    """The route's path template, exactly as the router declares it."""
    fill: Callable[[World], Call]
    """Where A's value goes."""
    expect: Check
    """What counts as "not A's data" for this route."""


def status(code: int) -> Check:
    """The route's refusal (404, or its documented not-found/refused status)."""

    async def check(world: World, response: httpx.Response) -> None:
        assert response.status_code == code, response.text

    return check


async def empty_page(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"] == [] and body["metadata"]["total"] == 0, body


async def _owner(world: World, sql: str, value: Any) -> int:
    async with world.rt.db.connection() as conn:
        owner: int = await conn.fetchval(sql, value)
    return owner


def own_transaction(code: int = 201, field_name: str = "transactionId") -> Check:
    """B got a new object of its own: the answer names a transaction of B, not of A."""

    async def check(world: World, response: httpx.Response) -> None:
        assert response.status_code == code, response.text
        value = response.json()[field_name]
        sql = (
            "SELECT account_id FROM transactions WHERE id = $1"
            if field_name == "id"
            else "SELECT account_id FROM transactions WHERE transaction_id = $1::uuid"
        )
        assert (
            await _owner(world, sql, value if field_name == "id" else str(value))
            == world.b.account_id
        )
        assert response.headers.get("Idempotent-Replayed") is None

    return check


async def own_cob(world: World, response: httpx.Response) -> None:
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["txid"] == world.cob_txid and body["revisao"] == 0
    assert (
        await _owner(world, "SELECT account_id FROM locations WHERE id = $1", body["loc"]["id"])
        == world.b.account_id
    )


async def own_webhook(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.json()["success"] is True and "created" in response.json()["message"]
    assert (
        await _owner(
            world,
            "SELECT count(*) FROM webhook_endpoints WHERE account_id = $1",
            world.b.account_id,
        )
        == 1
    )


async def own_webhook_list(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["accountId"], body["webhooks"], body["total"]) == (world.b.account_id, [], 0)
    assert body["enabled"] is True  # the world turns the API on: B sees its own empty list


async def own_balance(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    body = response.json()
    amounts = (
        body["data"][0]["balanceAmount"]
        if "data" in body
        else {"available": body["netBalance"], "blocked": body["blockedBalance"]}
    )
    assert (amounts["available"], amounts["blocked"]) == (B_BALANCE, 0)


async def no_leak_only(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text


def session(**params: Callable[[World], str]) -> Callable[[World], Call]:
    return lambda w: Call(who="session", params={k: f(w) for k, f in params.items()})


def html(code: int, text: str | None = None) -> Check:
    """A dashboard page (or its error page) with `code`, naming none of A's URLs."""

    async def check(world: World, response: httpx.Response) -> None:
        assert response.status_code == code, response.text
        assert response.headers["content-type"].startswith(("text/html", "image/png")), response
        assert "/alfa-" not in response.text, response.text
        assert text is None or text in response.text, response.text

    return check


async def signed_out(world: World, response: httpx.Response) -> None:
    assert response.status_code in (303, 401), response.text
    assert "pixgate_session=" not in response.headers.get("set-cookie", "").replace(
        'pixgate_session=""', ""
    )


async def own_overview(world: World, response: httpx.Response) -> None:
    await html(200, "R$ 100,00")(world, response)
    assert B_NAME in response.text


async def own_dashboard_charge(world: World, response: httpx.Response) -> None:
    assert response.status_code == 303, response.text
    created = response.headers["location"].rsplit("/", 1)[-1]
    sql = "SELECT account_id FROM transactions WHERE transaction_id = $1::uuid"
    assert await _owner(world, sql, created) == world.b.account_id


async def own_dashboard_webhook(world: World, response: httpx.Response) -> None:
    assert response.status_code == 200, response.text  # B's first URL: its secret shown once
    assert "Webhook added." in response.text and "/alfa-out" in response.text
    sql = "SELECT count(*) FROM webhook_endpoints WHERE account_id = $1"
    assert await _owner(world, sql, world.b.account_id) == 1


async def own_med_case(world: World, response: httpx.Response) -> None:
    assert response.status_code == 201, response.text
    case = response.json()
    assert case["isReconciled"] is False and case["blockedAmount"] == 0, case
    assert case["originalTransaction"] is None and case["originalTransactionId"] is None
    sql = "SELECT account_id FROM med_cases WHERE id = $1"
    assert await _owner(world, sql, case["id"]) == world.b.account_id


def statement(**query: Callable[[World], str]) -> Callable[[World], Call]:
    return lambda w: Call(query={k: f(w) for k, f in query.items()})


def resend(identifier: Callable[[World], Any], *, url: bool = False) -> Callable[[World], Call]:
    return lambda w: Call(
        params={"transactionIdentifier": str(identifier(w))},
        json={"url": w.receiver.url("/beta")} if url else None,
    )


def cash_out(
    external_id: Callable[[World], str], key: str = "beta@example.com", key_type: str = "EMAIL"
) -> Callable[[World], Call]:
    return lambda w: Call(
        json={
            "value": "1.01",
            "externalId": external_id(w),
            "description": "Pedido Beta",
            "details": {"key": key, "keyType": key_type, "name": "Fulano Beta", "document": CPF},
        }
    )


def cash_in(external_id: Callable[[World], str]) -> Callable[[World], Call]:
    return lambda w: Call(
        json={
            "transaction": {
                "value": "1.02",
                "description": "Cobranca Beta",
                "externalId": external_id(w),
            },
            "payer": {"fullName": "Pagador Beta", "document": CPF},
        }
    )


BETA_QR = encode(static("beta.qr@example.com", "Recebedor Beta", "Natal", 103, "BETAQR"))


def qr(
    code: Callable[[World], str], value: str, external_id: Callable[[World], str]
) -> Callable[[World], Call]:
    return lambda w: Call(json={"qrCode": code(w), "value": value, "externalId": external_id(w)})


def dict_key(key: str) -> Callable[[World], Call]:
    return lambda w: Call(
        json={
            "key": key,
            "keyType": "EMAIL",
            "name": "Holder Beta",
            "document": "11144477735",
            "ispb": "18236120",
            "bankName": "Banco Beta",
            "branch": "0002",
            "accountNumber": "1-1",
            "status": "BLOCKED",
        }
    )


def token(secret: Callable[[World], str]) -> Callable[[World], Call]:
    return lambda w: Call(json={"clientId": w.a.client_id, "clientSecret": secret(w)}, who="cert")


def ext(role: str) -> Callable[[World], str]:
    return lambda w: w.tx[role]["external_id"]


def e2e(role: str) -> Callable[[World], str]:
    return lambda w: w.tx[role]["end_to_end_id"]


def uid(role: str) -> Callable[[World], str]:
    return lambda w: str(w.tx[role]["transaction_id"])


COB = "/cob/{txid}"
BY_KEY = "/api/pix/transactions/pix-key/{pixKey}"
REFUND_IN = "/api/pix/refund-in/{id}"
DEVOLUCAO = "/pix/{e2eid}/devolucao/{id}"
REFUND_OUT = "/sandbox/pix/{transactionId}/refund-out"
RESEND = "/api/resend-webhook/{transactionIdentifier}"
PAY = "/sandbox/pix/pay"
PAYER = {"name": "Pagador Beta", "document": CPF}


async def call_as_b(world: World, method: str, path: str, call: Call) -> tuple[str, httpx.Response]:
    """B's request; returns what B sent (the answer may echo it) and the answer."""
    url = re.sub(r"\{(\w+)(:\w+)?\}", lambda m: call.params[m[1]], path)
    if call.who in ("session", "login"):
        return await call_dashboard_as_b(world, method, url, call)
    headers = {
        "b": world.b_headers,
        "anonymous": {},
        "cert": {"X-SSL-Client-Cert": cert_header(world.b.certificate_pem)},
    }[call.who]
    headers = {**headers, **call.headers}
    response = await world.client.request(
        method, url, params=call.query, json=call.json, headers=headers
    )
    sent = " ".join([url, json.dumps(call.query), json.dumps(call.json), *call.headers.values()])
    return sent, response


def _csrf(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found[1]


async def call_dashboard_as_b(
    world: World, method: str, url: str, call: Call
) -> tuple[str, httpx.Response]:
    """B in the dashboard: signed in (who=session), or at the sign-in form (who=login)."""
    token = _csrf(await world.client.get("/dashboard/login"))
    if call.who == "session":
        signed = await world.client.post(
            "/dashboard/login",
            data={
                "clientId": world.b.client_id,
                "clientSecret": world.b.client_secret,
                "csrf": token,
            },
        )
        assert signed.status_code == 303, signed.text
        token = _csrf(await world.client.get("/dashboard"))
    form = {"csrf": token, **(call.form or {})} if method == "POST" else None
    response = await world.client.request(method, url, params=call.query, data=form)
    return " ".join([url, json.dumps(call.query), json.dumps(call.form)]), response
