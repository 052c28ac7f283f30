"""Account A's world for the isolation sweep (tests/app/test_isolation.py): built through
the API, re-read whole (`snapshot`), and the checks that none of it reaches B (`leaks`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

from pixgate.accounts.service import accounts
from pixgate.core.pix.brcode import encode, static
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account
from tests.support import drain
from tests.webhooks.receiver import Receiver

A_NAME = "Loja Alfa Isolamento"
B_NAME = "Loja Beta Intrusa"
A_KEY = "alfa.isolada@example.com"
A_QR_KEY = "alfa.qrcode@example.com"
CPF = "52998224725"
HOLDER = "Maria Alfa Destino"
B_BALANCE = 100.0
API_PIX = Settings.model_fields["api_pix_base_path"].default
"""The API Pix's default base path, where the sweep calls it."""


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
    deliveries: list[int] = field(default_factory=list)
    """A's webhook delivery ids."""
    med: dict[str, Any] = field(default_factory=dict)
    """A's MED case, as GET /api/med lists it."""
    substrings: set[str] = field(default_factory=set)
    """A's identifiers and names: none may appear anywhere in an answer to B."""
    values: set[str] = field(default_factory=set)
    """A's amounts and event ids: no JSON value of an answer to B may equal one."""
    api: dict[str, Any] = field(default_factory=dict)
    """A's objects of the API Pix: txid (a revised cob), cob_loc (its location's id),
    loc (a location serving no cob), root_loc (the root-level cob's location), webhook_url
    (the webhook of A's key)."""

    @property
    def cob_txid(self) -> str:
        txid: str = self.charge["cob"]["txid"]
        return txid

    @property
    def key(self) -> str:
        """A's PIX key (its account's random key): its API Pix cob's chave and webhook's."""
        return self.a.pix_key


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
        world.deliveries = [
            r["id"]
            for r in await conn.fetch(
                "SELECT id FROM webhook_deliveries WHERE account_id = $1 ORDER BY id", a.account_id
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
    await build_api_pix(world, tag)
    return world


async def build_api_pix(world: World, tag: str) -> None:
    """A's objects of the API Pix, made under its base path: a cob on A's key revised once
    (revisions 0 and 1), a location serving no cob, and a webhook on A's key. Made after
    the rest, so A's events and webhook POSTs above stay as counted."""
    client, ah = world.client, world.a_headers
    txid = f"alfaapipix{tag}{'0' * 10}"
    cob = await _created(
        client.put(
            f"{API_PIX}/cob/{txid}",
            headers=ah,
            json={
                "calendario": {"expiracao": 3600},
                "devedor": {"cpf": CPF, "nome": "Devedor Alfa ApiPix"},
                "valor": {"original": "46.82"},
                "chave": world.key,
                "solicitacaoPagador": "Solicitacao Alfa ApiPix",
            },
        )
    )
    revised = await _created(
        client.patch(f"{API_PIX}/cob/{txid}", headers=ah, json={"valor": {"original": "46.83"}}),
        200,
    )
    assert revised["revisao"] == 1, revised
    loc = await _created(client.post(f"{API_PIX}/loc", headers=ah, json={"tipoCob": "cob"}))
    webhook_url = world.receiver.url(f"/alfa-chave-{tag}")
    hooked = await client.put(
        f"{API_PIX}/webhook/{world.key}", headers=ah, json={"webhookUrl": webhook_url}
    )
    assert hooked.status_code == 200, hooked.text
    async with world.rt.db.connection() as conn:
        root_loc = await conn.fetchval(
            "SELECT id FROM locations WHERE charge_id = $1", world.charge["cob"]["id"]
        )
        tokens = await conn.fetch(
            "SELECT token FROM locations WHERE account_id = $1", world.a.account_id
        )
    world.api = {
        "txid": txid,
        "cob_loc": cob["loc"]["id"],
        "loc": loc["id"],
        "root_loc": root_loc,
        "webhook_url": webhook_url,
    }
    world.substrings |= {txid, world.key, webhook_url, cob["location"], loc["location"]}
    world.substrings |= {t["token"] for t in tokens}
    world.substrings |= {"Devedor Alfa ApiPix", "Solicitacao Alfa ApiPix"}
    world.values |= {"46.82", "46.83"}


# --- what B may see, and what A must keep ----------------------------------------------------


def leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
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
    for leaf in leaves(body):
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
        await rows("locations", "SELECT * FROM locations WHERE account_id = $1", a)
        await rows("account_keys", "SELECT * FROM account_keys WHERE account_id = $1", a, key="key")
        await rows(
            "charge_revisions",
            """SELECT r.*, (r.charge_id, r.revision)::text AS at FROM charge_revisions r
               WHERE r.charge_id = ANY($1::bigint[])""",
            charges,
            key="at",
        )
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
        "api pix cob": (f"{API_PIX}/cob/{world.api['txid']}", None),
        "api pix cob revision 0": (f"{API_PIX}/cob/{world.api['txid']}", {"revisao": 0}),
        "api pix root cob": (f"{API_PIX}/cob/{world.cob_txid}", None),
        "api pix loc": (f"{API_PIX}/loc/{world.api['loc']}", None),
        "api pix cob loc": (f"{API_PIX}/loc/{world.api['cob_loc']}", None),
        "api pix webhook": (f"{API_PIX}/webhook/{world.key}", None),
        "api pix received": (f"{API_PIX}/pix/{world.tx['incoming']['end_to_end_id']}", None),
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
