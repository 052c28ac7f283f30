"""Isolation sweep (security item 7): account B holding account A's identifiers.

Every route that takes an id, externalId, txid, end-to-end id, PIX key, idempotency key,
event id, location token or similar is called by account B with account A's value. The
answer must be 404 (or the route's documented refusal), an empty page, or B's own new
object; it must carry none of A's identifiers, amounts or names; and none of A's objects may
change (`snapshot` re-reads A through the API and its rows, jobs and webhook deliveries).

A's objects are made through the HTTP API and the worker, as an integrator makes them: a
settled cash-out, a paid and an open cash-in charge, a cob, a settled QR cash-out, a settled
DICT transfer, a PIX received with a settled refund and a MED case against it, two webhook
URLs (with their delivered events) and a sandbox DICT key.

Every route of `pixgate.api.routes.ROUTERS` is classified below: rows of ROWS (B calls it
with A's value), BY_DESIGN (it reaches another account's object on purpose, each with its own
test here), or NAMES_NO_OBJECT. `TestGuard` fails for a route that is none of these, so a new
route must join the sweep.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from pixgate.api.routes import ROUTERS
from pixgate.domain.brcode import encode, static
from pixgate.runtime import Runtime
from pixgate.services import accounts
from tests.helpers import bearer, cert_header, make_account
from tests.support import drain
from tests.webhooks.receiver import Receiver

A_NAME = "Loja Alfa Isolamento"
B_NAME = "Loja Beta Intrusa"
A_KEY = "alfa.isolada@example.com"
A_QR_KEY = "alfa.qrcode@example.com"
CPF = "52998224725"
HOLDER = "Maria Alfa Destino"
B_BALANCE = 100.0


# --- account A's world, built through the API ---------------------------------------------


@dataclass
class World:
    rt: Runtime
    client: httpx.AsyncClient
    receiver: Receiver
    a: accounts.NewAccount
    b: accounts.NewAccount
    a_headers: dict[str, str]
    b_headers: dict[str, str]
    hook_secret: str
    idempotency_key: str
    dict_body: dict[str, Any]
    tx: dict[str, Any] = field(default_factory=dict)
    """A's transactions by role: cash_out, paid, open, cob, qr, dict, incoming, refund."""
    charge: dict[str, Any] = field(default_factory=dict)
    """A's charges by role: paid, open, cob."""
    events: dict[str, int] = field(default_factory=dict)
    """An event id of A per type."""
    endpoints: list[int] = field(default_factory=list)
    """A's webhook ids."""
    med: dict[str, Any] = field(default_factory=dict)
    """A's MED case, as GET /api/med lists it."""
    substrings: set[str] = field(default_factory=set)
    """A's identifiers and names: none may appear anywhere in an answer to B."""
    values: set[str] = field(default_factory=set)
    """A's amounts and event ids: no JSON value of an answer to B may equal one."""

    @property
    def cob_txid(self) -> str:
        txid: str = self.charge["cob"]["txid"]
        return txid


async def _created(response: Awaitable[httpx.Response], status: int = 201) -> dict[str, Any]:
    answer = await response
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def build_world(rt: Runtime, client: httpx.AsyncClient, receiver: Receiver) -> World:
    rt.settings = rt.settings.model_copy(
        update={"webhook_api_enabled": True, "allow_insecure_webhooks": True}
    )
    a = await make_account(rt, name=A_NAME, balance="500")
    b = await make_account(rt, name=B_NAME, balance=str(B_BALANCE))
    ah, bh = await bearer(client, a), await bearer(client, b)
    tag = uuid.uuid4().hex[:10]
    world = World(
        rt,
        client,
        receiver,
        a,
        b,
        ah,
        bh,
        hook_secret=f"alfa-hook-{tag}",
        idempotency_key=str(uuid.uuid4()),
        dict_body={"pixKey": A_KEY, "payment": {"currency": "BRL", "amount": 8.51}},
    )
    for event, path in (("cash_out", "/alfa-out"), ("cash_in", "/alfa-in")):
        added = await _created(
            client.post(
                "/api/webhooks",
                headers=ah,
                json={
                    "url": receiver.url(path),
                    "eventType": event,
                    "headers": [{"key": "X-Alfa-Token", "value": world.hook_secret}],
                },
            ),
            200,
        )
        assert added["success"] is True
    await _created(
        client.post(
            "/sandbox/dict/keys",
            headers=ah,
            json={
                "key": A_KEY,
                "keyType": "EMAIL",
                "name": HOLDER,
                "document": CPF,
                "ispb": "60701190",
                "bankName": "Banco Alfa Destino",
                "branch": "0001",
                "accountNumber": "7777-1",
            },
        )
    )
    cash_out = await _created(
        client.post(
            "/api/pix/cash-out",
            headers=ah,
            json={
                "value": "13.37",
                "externalId": f"alfa-cashout-{tag}",
                "description": "Pedido Alfa Saque",
                "details": {"key": A_KEY, "keyType": "EMAIL", "name": HOLDER, "document": CPF},
            },
        )
    )
    charges = {}
    for role, value, payer in (("paid", "21.43", "Paga"), ("open", "24.68", "Aberta")):
        charges[role] = await _created(
            client.post(
                "/api/pix/cash-in",
                headers=ah,
                json={
                    "transaction": {
                        "value": value,
                        "description": f"Cobranca Alfa {payer}",
                        "externalId": f"alfa-cashin-{role}-{tag}",
                    },
                    "payer": {"fullName": f"Devedor Alfa {payer}", "document": CPF},
                },
            )
        )
    await _created(
        client.post(
            "/sandbox/pix/pay",
            headers=ah,
            json={
                "pixCode": charges["paid"]["pixCode"],
                "payer": {"name": "Quem Pagou Alfa", "document": CPF},
            },
        )
    )
    txid = f"alfacob{tag}{'0' * 12}"
    await _created(
        client.put(
            f"/cob/{txid}",
            headers=ah,
            json={
                "calendario": {"expiracao": 3600},
                "devedor": {"cpf": CPF, "nome": "Devedor Alfa Cob"},
                "valor": {"original": "34.59"},
                "chave": A_KEY,
                "solicitacaoPagador": "Solicitacao Alfa Cob",
            },
        )
    )
    qr_code = encode(static(A_QR_KEY, "Recebedor Alfa QR", "Recife", 579, "ALFAQR"))
    qr = await _created(
        client.post(
            "/api/pix/cash-out-qrcode",
            headers=ah,
            json={"qrCode": qr_code, "value": "5.79", "externalId": f"alfa-qr-{tag}"},
        )
    )
    dict_transfer = await _created(
        client.post(
            "/dict/pix",
            headers={**ah, "x-idempotency-key": world.idempotency_key},
            json=world.dict_body,
        )
    )
    incoming = await _created(
        client.post(
            "/sandbox/pix/incoming",
            headers=ah,
            json={"value": "3.33", "payer": {"name": "Avulso Alfa Remetente", "document": CPF}},
        )
    )
    await _created(
        client.put(
            f"/pix/{incoming['endToEndId']}/devolucao/alfadev{tag}",
            headers=ah,
            json={"valor": "1.11", "descricao": "Devolucao Alfa"},
        )
    )
    world.med = await _created(
        client.post(
            "/sandbox/med",
            headers=ah,
            json={"endToEndId": incoming["endToEndId"], "description": "Disputa Alfa"},
        )
    )
    await drain(rt)

    async with rt.db.connection() as conn:
        rows = {
            r["transaction_id"]: dict(r)
            for r in await conn.fetch(
                "SELECT * FROM transactions WHERE account_id = $1", a.account_id
            )
        }
        charge_rows = [
            dict(r)
            for r in await conn.fetch(
                "SELECT c.*, t.transaction_id AS payment_uuid FROM charges c "
                "JOIN transactions t ON t.id = c.transaction_id WHERE c.account_id = $1",
                a.account_id,
            )
        ]
        events = await conn.fetch(
            "SELECT id, type FROM events WHERE account_id = $1 ORDER BY id", a.account_id
        )
        available = await conn.fetchval(
            "SELECT available FROM accounts WHERE id = $1", a.account_id
        )
    by_uuid = {str(k): v for k, v in rows.items()}
    world.tx = {
        "cash_out": by_uuid[cash_out["transactionId"]],
        "paid": by_uuid[charges["paid"]["transactionId"]],
        "open": by_uuid[charges["open"]["transactionId"]],
        "qr": by_uuid[qr["transactionId"]],
        "dict": next(r for r in rows.values() if r["id"] == dict_transfer["id"]),
        "incoming": by_uuid[incoming["transactionId"]],
        "refund": next(r for r in rows.values() if r["external_id"] == f"alfadev{tag}"),
    }
    for charge in charge_rows:
        role = (
            "cob"
            if charge["kind"] == "cob"
            else next(
                r
                for r in ("paid", "open")
                if world.tx[r]["transaction_id"] == charge["payment_uuid"]
            )
        )
        world.charge[role] = charge
        if role == "cob":
            world.tx["cob"] = rows[charge["payment_uuid"]]
    world.events = {e["type"]: e["id"] for e in events}
    async with rt.db.connection() as conn:
        world.endpoints = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM webhook_endpoints WHERE account_id = $1", a.account_id
            )
        ]
    assert world.tx["cash_out"]["status"] == "CONFIRMED"
    assert world.tx["qr"]["status"] == "CONFIRMED" and world.tx["dict"]["status"] == "CONFIRMED"
    assert world.tx["paid"]["status"] == "CONFIRMED" and world.tx["open"]["status"] == "PENDING"
    assert world.tx["refund"]["status"] == "CONFIRMED"
    assert world.med["status"] == "RECEIVED" and world.med["blockedAmount"] == 2.22
    assert len(events) == 7 and {p.path for p in receiver.received} == {"/alfa-out", "/alfa-in"}

    for row in rows.values():
        world.substrings |= {str(row["transaction_id"])}
        world.substrings |= {v for v in (row["external_id"], row["end_to_end_id"]) if v}
        world.values.add(f"{Decimal(row['amount']) / 100:.2f}")
    for charge in world.charge.values():
        world.substrings |= {charge["txid"], charge["location_token"], charge["pix_code"]}
    world.substrings |= {
        world.idempotency_key,
        world.hook_secret,
        a.client_id,
        A_NAME,
        "Alfa Isolamento",
        HOLDER,
        A_KEY,
        A_QR_KEY,
        "Recebedor Alfa QR",
        "Pedido Alfa Saque",
        "Devedor Alfa Paga",
        "Devedor Alfa Aberta",
        "Cobranca Alfa Paga",
        "Cobranca Alfa Aberta",
        "Quem Pagou Alfa",
        "Devedor Alfa Cob",
        "Solicitacao Alfa Cob",
        "Avulso Alfa Remetente",
        "Devolucao Alfa",
        "Disputa Alfa",
    }
    world.values |= {f"evt_{e['id']}" for e in events} | {f"{Decimal(available) / 100:.2f}"}
    return world


# --- what B may see, and what A must keep ----------------------------------------------------


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def leaks(
    world: World, sent: str, response: httpx.Response, *, allowed: frozenset[str] = frozenset()
) -> list[str]:
    """A's identifiers, names or amounts in the answer, except what B itself sent."""
    text = response.text + json.dumps(dict(response.headers))
    found = [s for s in world.substrings if s in text and s not in sent and s not in allowed]
    try:
        body = response.json()
    except ValueError:
        body = None
    for leaf in _leaves(body):
        if isinstance(leaf, bool) or leaf is None:
            continue
        shown = f"{Decimal(str(leaf)):.2f}" if isinstance(leaf, int | float) else str(leaf)
        if (
            (shown in world.values or str(leaf) in world.values)
            and shown not in sent
            and shown not in allowed
        ):
            found.append(f"{leaf!r}")
    return found


async def snapshot(world: World) -> dict[str, Any]:
    """A as A sees it (API) and as stored (rows, jobs, deliveries), plus every webhook POST."""
    a = world.a.account_id
    sections: dict[str, Any] = {}
    async with world.rt.db.connection() as conn:

        async def rows(name: str, sql: str, *args: Any, key: str = "id") -> list[Any]:
            found = await conn.fetch(sql, *args)
            sections[name] = {r[key]: dict(r) for r in found}
            return [r[key] for r in found]

        await rows("accounts", "SELECT * FROM accounts WHERE id = $1", a)
        txs = await rows("transactions", "SELECT * FROM transactions WHERE account_id = $1", a)
        charges = await rows("charges", "SELECT * FROM charges WHERE account_id = $1", a)
        await rows("events", "SELECT * FROM events WHERE account_id = $1", a)
        await rows("webhook_endpoints", "SELECT * FROM webhook_endpoints WHERE account_id = $1", a)
        await rows("webhook_secrets", "SELECT * FROM webhook_secrets WHERE account_id = $1", a)
        deliveries = await rows(
            "webhook_deliveries", "SELECT * FROM webhook_deliveries WHERE account_id = $1", a
        )
        await rows(
            "webhook_attempts",
            "SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::bigint[])",
            deliveries,
        )
        await rows("med_cases", "SELECT * FROM med_cases WHERE account_id = $1", a)
        await rows("ledger_postings", "SELECT * FROM ledger_postings WHERE account_id = $1", a)
        await rows(
            "limit_usage", "SELECT * FROM limit_usage WHERE account_id = $1", a, key="bucket"
        )
        await rows(
            "credentials", "SELECT * FROM credentials WHERE account_id = $1", a, key="client_id"
        )
        await rows(
            "certificates", "SELECT * FROM certificates WHERE account_id = $1", a, key="fingerprint"
        )
        await rows(
            "sandbox_dict_keys",
            "SELECT * FROM sandbox_dict_keys WHERE key = $1 OR account_id = $2",
            A_KEY,
            a,
            key="key",
        )
        await rows(
            "jobs",
            """SELECT * FROM jobs
               WHERE (args->>'transaction_id')::bigint = ANY($1::bigint[])
                  OR (args->>'charge_id')::bigint = ANY($2::bigint[])
                  OR (args->>'delivery_id')::bigint = ANY($3::bigint[])
                  OR (args->>'account_id')::bigint = $4""",
            txs,
            charges,
            deliveries,
            a,
        )
    client, ah = world.client, world.a_headers
    reads = {
        "statement": ("/api/transactions", {"size": 100}),
        "cob": (f"/cob/{world.cob_txid}", None),
        "webhooks": ("/api/webhooks", None),
        "events": ("/api/events", {"size": 100}),
        "balance": ("/api/balance", None),
        "med": ("/api/med", None),
    }
    for name, (path, params) in reads.items():
        response = await client.get(path, params=params, headers=ah)
        assert response.status_code == 200, (path, response.text)
        body = response.json()
        body.pop("consultedAt", None)
        sections[f"api {name}"] = {"": body}
    sections["webhook POSTs"] = {"": [r.path for r in world.receiver.received]}
    return sections


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(section, key, added | removed | changed) for every difference."""
    out = []
    for section in before.keys() | after.keys():
        old, new = before.get(section, {}), after.get(section, {})
        out += [(section, k, "added") for k in new.keys() - old.keys()]
        out += [(section, k, "removed") for k in old.keys() - new.keys()]
        out += [(section, k, "changed") for k in old.keys() & new.keys() if old[k] != new[k]]
    return sorted(out, key=repr)


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
        await _owner(world, "SELECT account_id FROM charges WHERE id = $1", body["loc"]["id"])
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
    assert response.json() == {"accountId": world.b.account_id, "webhooks": [], "total": 0}


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

ROWS: list[Row] = [
    # token: A's clientId with B's certificate. Without A's secret the answer is an unknown
    # clientId's (401), so B cannot tell that A's clientId exists; with A's secret, 403
    # PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT
    Row(
        "token-a-client", "POST", "/api/auth/token", token(lambda w: w.b.client_secret), status(401)
    ),
    Row(
        "oauth-token-a-client",
        "POST",
        "/oauth/token",
        token(lambda w: w.b.client_secret),
        status(401),
    ),
    Row(
        "token-a-client-a-secret",
        "POST",
        "/api/auth/token",
        token(lambda w: w.a.client_secret),
        status(403),
    ),
    # externalIds are unique per account: A's externalId is free for B, and never a duplicate
    # error naming A's transaction (existingTransactionId)
    Row(
        "cash-in-a-external-id", "POST", "/api/pix/cash-in", cash_in(ext("paid")), own_transaction()
    ),
    Row(
        "cash-in-a-cash-out-external-id",
        "POST",
        "/api/pix/cash-in",
        cash_in(ext("cash_out")),
        own_transaction(),
    ),
    Row(
        "cash-out-a-external-id",
        "POST",
        "/api/pix/cash-out",
        cash_out(ext("cash_out")),
        own_transaction(),
    ),
    Row(
        "cash-out-a-charge-external-id",
        "POST",
        "/api/pix/cash-out",
        cash_out(ext("open")),
        own_transaction(),
    ),
    # the DICT is one directory (as the real one): B may pay A's registered key, A unchanged
    Row(
        "cash-out-to-a-dict-key",
        "POST",
        "/api/pix/cash-out",
        cash_out(lambda w: "beta-to-alfa-key", key=A_KEY),
        own_transaction(),
    ),
    Row(
        "qr-a-external-id",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: BETA_QR, "1.03", ext("qr")),
        own_transaction(),
    ),
    Row(
        "qr-a-paid-charge",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: w.charge["paid"]["pix_code"], "21.43", lambda w: "beta-qr-paid"),
        status(400),
    ),
    Row(
        "qr-a-cob-wrong-amount",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: w.charge["cob"]["pix_code"], "1.00", lambda w: "beta-qr-cob"),
        status(400),
    ),
    # DICT transfers: idempotency keys are the account's; A's key replays nothing for B
    Row(
        "dict-a-idempotency-key-same-body",
        "POST",
        "/dict/pix",
        lambda w: Call(json=w.dict_body, headers={"x-idempotency-key": w.idempotency_key}),
        own_transaction(field_name="id"),
    ),
    Row(
        "dict-a-idempotency-key-other-body",
        "POST",
        "/dict/pix",
        lambda w: Call(
            json={"pixKey": A_KEY, "payment": {"currency": "BRL", "amount": 1.04}},
            headers={"x-idempotency-key": w.idempotency_key},
        ),
        own_transaction(field_name="id"),
    ),
    # cob: txids are unique per receiving account
    Row("cob-get-a-txid", "GET", COB, lambda w: Call(params={"txid": w.cob_txid}), status(404)),
    Row(
        "cob-get-a-cash-in-txid",
        "GET",
        COB,
        lambda w: Call(params={"txid": w.charge["open"]["txid"]}),
        status(404),
    ),
    Row(
        "cob-patch-a-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid},
            json={"valor": {"original": "1.05"}, "solicitacaoPagador": "Beta mudou"},
        ),
        status(404),
    ),
    Row(
        "cob-cancel-a-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid}, json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
        ),
        status(404),
    ),
    Row(
        "cob-put-a-txid",
        "PUT",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid},
            json={"calendario": {"expiracao": 600}, "valor": {"original": "1.06"}},
        ),
        own_cob,
    ),
    # balances and lists: B's own, filters on A's values find nothing
    Row("balances", "GET", "/accounts/balances", lambda w: Call(), own_balance),
    Row("balance", "GET", "/api/balance", lambda w: Call(), own_balance),
    Row("statement", "GET", "/api/transactions", lambda w: Call(), empty_page),
    *(
        Row(
            f"statement-external-id-{role}",
            "GET",
            "/api/transactions",
            statement(externalId=ext(role)),
            empty_page,
        )
        for role in ("cash_out", "paid", "open", "qr")
    ),
    *(
        Row(
            f"statement-end-to-end-{role}",
            "GET",
            "/api/transactions",
            statement(endToEndId=e2e(role)),
            empty_page,
        )
        for role in ("cash_out", "paid", "qr", "dict", "incoming")
    ),
    Row(
        "statement-all-filters",
        "GET",
        "/api/transactions",
        statement(
            externalId=ext("cash_out"),
            endToEndId=e2e("cash_out"),
            status=lambda w: "CONFIRMED",
            type=lambda w: "WITHDRAW",
        ),
        empty_page,
    ),
    Row(
        "by-key-a-cash-out-key", "GET", BY_KEY, lambda w: Call(params={"pixKey": A_KEY}), empty_page
    ),
    Row(
        "by-key-a-key-other-spelling",
        "GET",
        BY_KEY,
        lambda w: Call(params={"pixKey": A_KEY.upper()}),
        empty_page,
    ),
    Row("by-key-a-qr-key", "GET", BY_KEY, lambda w: Call(params={"pixKey": A_QR_KEY}), empty_page),
    # webhooks: configuration, events and resend are the account's
    Row(
        "webhooks-add-a-url",
        "POST",
        "/api/webhooks",
        lambda w: Call(
            json={
                "url": w.receiver.url("/alfa-out"),
                "eventType": "cash_out",
                "headers": [{"key": "X-Alfa-Token", "value": "beta"}],
                "version": "v2",
            }
        ),
        own_webhook,
    ),
    Row("webhooks-list", "GET", "/api/webhooks", lambda w: Call(), own_webhook_list),
    Row("events", "GET", "/api/events", lambda w: Call(), empty_page),
    Row(
        "events-cash-out",
        "GET",
        "/api/events",
        lambda w: Call(query={"type": "cash_out", "deliveryState": "delivered"}),
        empty_page,
    ),
    Row(
        "resend-a-numeric-id", "POST", RESEND, resend(lambda w: w.tx["cash_out"]["id"]), status(404)
    ),
    Row("resend-a-uuid", "POST", RESEND, resend(uid("cash_out")), status(404)),
    Row("resend-a-uuid-to-b-url", "POST", RESEND, resend(uid("paid"), url=True), status(404)),
    Row("resend-a-external-id", "POST", RESEND, resend(ext("cash_out")), status(404)),
    Row("resend-a-end-to-end-id", "POST", RESEND, resend(e2e("dict")), status(404)),
    Row(
        "resend-a-incoming-end-to-end-id",
        "POST",
        RESEND,
        resend(e2e("incoming"), url=True),
        status(404),
    ),
    Row(
        "resend-a-event-id",
        "POST",
        RESEND,
        resend(lambda w: f"evt_{w.events['cash_out']}"),
        status(404),
    ),
    Row(
        "resend-a-event-id-to-b-url",
        "POST",
        RESEND,
        resend(lambda w: f"evt_{w.events['cash_in']}", url=True),
        status(404),
    ),
    # refunds: only the account's own receipts (and its own refunds, and cash-outs) are named
    *(
        Row(
            f"refund-in-a-{role}",
            "POST",
            REFUND_IN,
            lambda w, role=role: Call(
                params={"id": uid(role)(w)},
                json={"refundValue": "0.01", "externalId": "betarefund"},
            ),
            status(404),
        )
        for role in ("incoming", "paid", "cash_out", "refund")
    ),
    *(
        Row(
            f"devolucao-put-a-{role}",
            "PUT",
            DEVOLUCAO,
            lambda w, role=role: Call(
                params={"e2eid": e2e(role)(w), "id": w.tx["refund"]["external_id"]},
                json={"valor": "1.11", "descricao": "Devolucao Alfa"},
            ),
            status(404),
        )
        for role in ("incoming", "paid")
    ),
    Row(
        "devolucao-get-a-refund",
        "GET",
        DEVOLUCAO,
        lambda w: Call(params={"e2eid": e2e("incoming")(w), "id": w.tx["refund"]["external_id"]}),
        status(404),
    ),
    *(
        Row(
            f"refund-out-a-{role}",
            "POST",
            REFUND_OUT,
            lambda w, role=role: Call(params={"transactionId": uid(role)(w)}, json={"value": 1}),
            status(404),
        )
        for role in ("cash_out", "qr", "dict")
    ),
    # MED: B lists only its own cases; A's PIX is no PIX of B's (an unreconciled case of B's,
    # nothing blocked); A's case can be neither analysed nor cancelled by B
    Row("med-list", "GET", "/api/med", lambda w: Call(), empty_page),
    *(
        Row(
            f"med-list-{name}",
            "GET",
            "/api/med",
            lambda w, query=query: Call(query=query),
            empty_page,
        )
        for name, query in (
            ("received", {"status": "RECEIVED"}),
            ("reconciled", {"isReconciled": True}),
        )
    ),
    Row(
        "sandbox-med-a-end-to-end-id",
        "POST",
        "/sandbox/med",
        lambda w: Call(json={"endToEndId": e2e("incoming")(w)}),
        own_med_case,
    ),
    Row(
        "sandbox-med-cancel-a-case",
        "POST",
        "/sandbox/med",
        lambda w: Call(json={"endToEndId": e2e("incoming")(w), "reason": "REFUND_CANCELLATION"}),
        status(404),
    ),
    *(
        Row(
            f"sandbox-med-analysis-a-case-{result.lower()}",
            "POST",
            "/sandbox/med/{id}/analysis",
            lambda w, result=result: Call(params={"id": str(w.med["id"])}, json={"result": result}),
            status(404),
        )
        for result in ("APPROVED", "REJECTED")
    ),
    # sandbox: A's DICT entry is A's (409: held by another account), A's paid charge stays paid
    Row("sandbox-dict-a-key", "POST", "/sandbox/dict/keys", dict_key(A_KEY), status(409)),
    Row(
        "sandbox-dict-a-key-other-spelling",
        "POST",
        "/sandbox/dict/keys",
        dict_key(A_KEY.upper()),
        status(409),
    ),
    Row(
        "sandbox-pay-a-paid-charge",
        "POST",
        PAY,
        lambda w: Call(json={"pixCode": w.charge["paid"]["pix_code"], "payer": PAYER}),
        status(409),
    ),
    Row(
        "sandbox-incoming",
        "POST",
        "/sandbox/pix/incoming",
        lambda w: Call(json={"value": "1.07", "payer": PAYER}),
        own_transaction(),
    ),
    # unauthenticated, aggregated by route template: no identifier of anyone
    # the dashboard: a session of B is B's; A's clientId signs nothing in with B's secret
    Row(
        "dashboard-login-a-client-b-secret",
        "POST",
        "/dashboard/login",
        lambda w: Call(
            who="login", form={"clientId": w.a.client_id, "clientSecret": w.b.client_secret}
        ),
        signed_out,
    ),
    Row("dashboard-overview", "GET", "/dashboard", session(), own_overview),
    Row(
        "dashboard-transactions-a-external-id",
        "GET",
        "/dashboard/transactions",
        lambda w: Call(who="session", query={"externalId": w.tx["cash_out"]["external_id"]}),
        html(200, "No transactions."),
    ),
    Row(
        "dashboard-transactions-a-end-to-end-id",
        "GET",
        "/dashboard/transactions",
        lambda w: Call(who="session", query={"endToEndId": w.tx["dict"]["end_to_end_id"]}),
        html(200, "No transactions."),
    ),
    Row("dashboard-charges-form", "GET", "/dashboard/charges", session(), html(200)),
    Row(
        "dashboard-charge-a-external-id",
        "POST",
        "/dashboard/charges",
        lambda w: Call(
            who="session",
            form={
                "value": "1.09",
                "description": "Cobranca Beta",
                "externalId": w.tx["open"]["external_id"],
                "payerName": "Pagador Beta",
                "payerDocument": CPF,
            },
        ),
        own_dashboard_charge,
    ),
    *(
        Row(
            f"dashboard-charge-{role}-a-{name}",
            "GET",
            path,
            session(transaction_id=uid(name)),
            html(404),
        )
        for role, path in (
            ("page", "/dashboard/charges/{transaction_id}"),
            ("qr", "/dashboard/charges/{transaction_id}/qr.png"),
        )
        for name in ("open", "paid", "cob")
    ),
    Row("dashboard-webhooks", "GET", "/dashboard/webhooks", session(), html(200)),
    Row(
        "dashboard-webhooks-edit-a-id",
        "GET",
        "/dashboard/webhooks",
        lambda w: Call(who="session", query={"edit": str(w.endpoints[0])}),
        html(200),
    ),
    Row(
        "dashboard-webhooks-add-a-url",
        "POST",
        "/dashboard/webhooks",
        lambda w: Call(
            who="session",
            form={"eventType": "cash_out", "url": w.receiver.url("/alfa-out"), "version": "v2"},
        ),
        own_dashboard_webhook,
    ),
    *(
        Row(
            f"dashboard-webhook-deactivate-a-{n}",
            "POST",
            "/dashboard/webhooks/{webhook_id}/deactivate",
            (lambda n: lambda w: Call(who="session", params={"webhook_id": str(w.endpoints[n])}))(
                n
            ),
            html(404),
        )
        for n in (0, 1)
    ),
    Row("dashboard-secret", "POST", "/dashboard/webhooks/secret", session(), html(200)),
    Row(
        "dashboard-secret-rotate", "POST", "/dashboard/webhooks/secret/rotate", session(), html(200)
    ),
    Row(
        "dashboard-deliveries",
        "GET",
        "/dashboard/deliveries",
        lambda w: Call(who="session", query={"type": "cash_out", "status": "delivered"}),
        html(200, "No events"),
    ),
    *(
        Row(
            f"dashboard-resend-a-{kind}",
            "POST",
            "/dashboard/deliveries/{event_id}/resend",
            (lambda k: lambda w: Call(who="session", params={"event_id": str(w.events[k])}))(kind),
            html(404),
        )
        for kind in ("cash_out", "cash_in")
    ),
    Row(
        "dashboard-other-page-a-uuid",
        "GET",
        "/dashboard/{rest:path}",
        lambda w: Call(who="session", params={"rest": str(w.tx["cash_out"]["transaction_id"])}),
        html(404),
    ),
    Row("dashboard-logout", "POST", "/dashboard/logout", session(), signed_out),
    Row("metrics", "GET", "/metrics", lambda w: Call(who="anonymous"), no_leak_only),
]

BY_DESIGN: dict[tuple[str, str], str] = {
    ("GET", "/loc/{token}"): "unauthenticated by design (the payer's bank fetches the charge) "
    "and keyed by a 128-bit random token: test_location_shows_only_the_named_charge",
    ("POST", PAY): "the outside world pays any charge by its code (sandbox only); refused for a "
    "paid charge in ROWS: test_sandbox_pay_reaches_only_the_named_charge",
    ("POST", "/api/pix/cash-out-qrcode"): "paying another account's charge is the point of a QR "
    "cash-out; refusals and externalIds in ROWS: test_qr_cash_out_pays_only_the_named_charge",
}

NAMES_NO_OBJECT: dict[tuple[str, str], str] = {
    ("GET", "/healthz"): "liveness, a constant",
    ("GET", "/readyz"): "readiness, the database answers",
    ("GET", "/.well-known/jwks.json"): "public token-verification keys",
    ("GET", "/.well-known/pix-jwks.json"): "public location-signing keys",
    ("GET", "/docs"): "static Swagger UI",
    ("GET", "/dashboard/login"): "the dashboard's sign-in form",
}


def api_routes() -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods or ()
    }


# --- the sweep ----------------------------------------------------------------------------


@pytest.fixture
async def world(rt: Runtime, client: httpx.AsyncClient, receiver: Receiver) -> World:
    return await build_world(rt, client, receiver)


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


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
async def test_b_with_a_value(world: World, row: Row) -> None:
    before = await snapshot(world)
    sent, response = await call_as_b(world, row.method, row.path, row.fill(world))
    await row.expect(world, response)
    assert leaks(world, sent, response) == [], response.text
    assert changes(before, await snapshot(world)) == []


class TestByDesign:
    async def test_location_shows_only_the_named_charge(self, world: World) -> None:
        before = await snapshot(world)
        for role in ("open", "cob"):
            charge = world.charge[role]
            response = await world.client.get(f"/loc/{charge['location_token']}")
            assert response.status_code == 200, response.text
            assert response.headers["content-type"].startswith("application/jose")
            encoded = response.text.split(".")[1]
            payload = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
            assert payload["txid"] == charge["txid"]
            assert payload["valor"]["original"] == f"{Decimal(charge['amount']) / 100:.2f}"
            # the charge's own fields (devedor, chave, solicitacaoPagador...) may show
            own = frozenset(
                {
                    charge["txid"],
                    payload["valor"]["original"],
                    *(str(v) for v in _leaves(charge["body"])),
                }
            )
            shown = httpx.Response(200, json=payload)
            assert leaks(world, "", shown, allowed=own) == [], payload
        paid = await world.client.get(f"/loc/{world.charge['paid']['location_token']}")
        assert paid.status_code == 410 and leaks(world, "", paid) == [], paid.text
        unknown = await world.client.get(f"/loc/{uuid.uuid4().hex}")
        assert unknown.status_code == 404
        assert changes(before, await snapshot(world)) == []

    async def test_sandbox_pay_reaches_only_the_named_charge(self, world: World) -> None:
        charge, payment = world.charge["open"], world.tx["open"]
        before = await snapshot(world)
        sent, response = await call_as_b(
            world, "POST", PAY, Call(json={"pixCode": charge["pix_code"], "payer": PAYER})
        )
        assert response.status_code == 201, response.text
        # the answer names the payment received (documented), nothing else of A's
        assert response.json()["transactionId"] == str(payment["transaction_id"])
        allowed = frozenset({str(payment["transaction_id"])})
        assert leaks(world, sent, response, allowed=allowed) == [], response.text
        self.only_this_charge_paid(world, before, await snapshot(world), "open")
        assert await self.b_balance(world) == (10000, 0)

    async def test_qr_cash_out_pays_only_the_named_charge(self, world: World) -> None:
        charge, payment = world.charge["cob"], world.tx["cob"]
        before = await snapshot(world)
        sent, response = await call_as_b(
            world,
            "POST",
            "/api/pix/cash-out-qrcode",
            Call(json={"qrCode": charge["pix_code"], "value": "34.59", "externalId": "beta-paga"}),
        )
        await own_transaction()(world, response)
        assert leaks(world, sent, response) == [], response.text
        after = await snapshot(world)
        self.only_this_charge_paid(world, before, after, "cob")

        # both sides carry one end-to-end id; B's reads by it find B's WITHDRAW only
        async with world.rt.db.connection() as conn:
            shared = await conn.fetchval(
                "SELECT end_to_end_id FROM transactions WHERE id = $1", payment["id"]
            )
        listed = await world.client.get(
            "/api/transactions", params={"endToEndId": shared}, headers=world.b_headers
        )
        assert [i["transactionId"] for i in listed.json()["data"]] == [
            response.json()["transactionId"]
        ]
        assert listed.json()["data"][0]["operationType"] == "Pix out"
        assert str(payment["transaction_id"]) not in listed.text
        resent = await world.client.post(
            f"/api/resend-webhook/{shared}",
            headers=world.b_headers,
            json={"url": world.receiver.url("/beta")},
        )
        assert resent.status_code == 200, resent.text
        delivered = json.loads(world.receiver.at("/beta")[0].body)
        assert delivered["transactionId"] == response.json()["transactionId"]
        assert str(payment["transaction_id"]) not in world.receiver.at("/beta")[0].body.decode()
        cob = await world.client.get(f"/cob/{world.cob_txid}", headers=world.b_headers)
        assert cob.status_code == 404
        # the resend and the reads changed nothing of A's (only the POST to B's URL is new)
        final = await snapshot(world)
        assert changes(after, final) == [("webhook POSTs", "", "changed")]
        assert final["webhook POSTs"][""] == [*after["webhook POSTs"][""], "/beta"]

    @staticmethod
    async def b_balance(world: World) -> tuple[int, int]:
        async with world.rt.db.connection() as conn:
            row = await conn.fetchrow(
                "SELECT available, blocked FROM accounts WHERE id = $1", world.b.account_id
            )
        assert row is not None
        return row["available"], row["blocked"]

    @staticmethod
    def only_this_charge_paid(
        world: World, before: dict[str, Any], after: dict[str, Any], role: str
    ) -> None:
        """The named charge paid and A credited; every other object of A as it was."""
        charge, payment = world.charge[role], world.tx[role]
        allowed_changes = {
            ("accounts", world.a.account_id),
            ("charges", charge["id"]),
            ("transactions", payment["id"]),
        }
        may_grow = {"events", "webhook_deliveries", "jobs", "ledger_postings"}
        for section, key, kind in changes(before, after):
            if section.startswith("api "):
                continue  # A's own view of the same rows, checked below
            assert (kind == "changed" and (section, key) in allowed_changes) or (
                kind == "added" and section in may_grow
            ), (section, key, kind)
        assert after["charges"][charge["id"]]["status"] in ("CONFIRMED", "CONCLUIDA")
        assert after["transactions"][payment["id"]]["status"] == "CONFIRMED"
        grew = (
            after["accounts"][world.a.account_id]["available"]
            - before["accounts"][world.a.account_id]["available"]
        )
        assert grew == charge["amount"]
        for other in ("cash_out", "paid", "open", "cob", "qr", "dict", "incoming", "refund"):
            if other != role:
                row = world.tx[other]
                assert after["transactions"][row["id"]] == before["transactions"][row["id"]]


class TestSandboxDictKeys:
    async def test_b_cannot_reshape_the_key_a_pays(self, world: World) -> None:
        """The harm of re-registering another account's key: A's next payment to it would
        reach B's holder, or fail if B marked it BLOCKED."""
        _, response = await call_as_b(world, "POST", "/sandbox/dict/keys", dict_key(A_KEY)(world))
        assert response.status_code == 409, response.text
        again = await world.client.post(
            "/api/pix/cash-out",
            headers=world.a_headers,
            json={
                "value": "1.08",
                "externalId": "alfa-depois",
                "details": {"key": A_KEY, "keyType": "EMAIL", "name": HOLDER, "document": CPF},
            },
        )
        assert again.status_code == 201, again.text
        await drain(world.rt)
        async with world.rt.db.connection() as conn:
            row = await conn.fetchrow(
                "SELECT status, counterpart FROM transactions WHERE transaction_id = $1::uuid",
                again.json()["transactionId"],
            )
        assert row is not None and row["status"] == "CONFIRMED"
        assert row["counterpart"]["name"] == HOLDER
        assert row["counterpart"]["bank"]["bankName"] == "Banco Alfa Destino"

    async def test_b_keeps_reshaping_its_own_keys(self, world: World) -> None:
        for status_ in ("ACTIVE", "BLOCKED"):
            call = dict_key("beta.propria@example.com")(world)
            _, response = await call_as_b(
                world, "POST", "/sandbox/dict/keys", Call(json={**call.json, "status": status_})
            )
            assert response.status_code == 201, response.text
            assert response.json()["status"] == status_


# --- the guard ------------------------------------------------------------------------------


class TestGuard:
    def test_every_route_is_in_the_sweep(self) -> None:
        swept = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys()
        missing = sorted(api_routes() - swept - NAMES_NO_OBJECT.keys())
        assert missing == [], f"add rows to ROWS (or classify) for {missing}"

    def test_every_route_with_a_path_parameter_has_a_row(self) -> None:
        swept = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys()
        missing = sorted(r for r in api_routes() if "{" in r[1] and r not in swept)
        assert missing == [], f"a route naming an object needs rows in ROWS: {missing}"
        assert not [r for r in NAMES_NO_OBJECT if "{" in r[1]]

    def test_no_row_names_a_route_that_is_gone(self) -> None:
        listed = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys() | NAMES_NO_OBJECT.keys()
        assert sorted(listed - api_routes()) == []
        assert len({r.id for r in ROWS}) == len(ROWS)
