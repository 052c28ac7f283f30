"""Amounts are exact and strict, through HTTP: one range (0.01 to 9999999999.99) and one
spelling per field, checked where the request is parsed, on every operation that takes an
amount; answers carry amounts as exact JSON numbers; a sum the gateway keeps never
overflows into a 500 (docs/errors.md, "Amounts")."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from pixgate.core.money import MAX_AMOUNT, MAX_CENTS, to_cents
from pixgate.core.pix import brcode
from pixgate.payouts.schemas.cash_out_qrcode import EXAMPLE_CODE
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import balance, bearer, cert_header, footprint, make_account
from tests.processes import PIXGATE, server_env, serving
from tests.support import drain
from tests.webhooks.receiver import Receiver

CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"
PAYER = {"name": "Pagador", "document": CPF}
TXID = "amounts" + "0" * 23
E2E = "E" + "1" * 31
HIGHEST = "9999999999.99"
BADLY_WRITTEN = ["1e2", "１０", "١٠", " 10", "10 ", "1_000", ".5", "10.", "10\n", "+10", "0x10"]
"""Strings Python's Decimal (and so the gateway, before) read as amounts."""


def cash_out(value: object) -> dict[str, Any]:
    return {
        "value": value,
        "externalId": f"ext-{uuid.uuid4()}",
        "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
    }


def cash_in(value: object = "10.00", splits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "transaction": {
            "value": value,
            "description": "Pedido",
            "externalId": f"ext-{uuid.uuid4()}",
        },
        "payer": {"fullName": "Maria da Silva", "document": CPF},
        "splits": splits or [],
    }


def split(value: object, kind: str = "PERCENTAGE") -> dict[str, Any]:
    return {
        "pixKey": EVP,
        "pixKeyType": "RANDOM",
        "name": "Parceiro",
        "document": CPF,
        "type": kind,
        "value": value,
    }


def cob(original: object) -> dict[str, Any]:
    return {"calendario": {"expiracao": 3600}, "valor": {"original": original}}


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    body: Callable[[object], dict[str, Any]]
    field: str
    code: str = "HTTP_ERROR"
    headers: tuple[tuple[str, str], ...] = ()


ANY_ID = "00000000-0000-4000-8000-000000000000"
OPERATIONS = [
    Operation("POST", "/api/pix/cash-out", cash_out, "value", "PIX_INVALID_AMOUNT"),
    Operation(
        "POST",
        "/api/pix/cash-out-qrcode",
        lambda v: {"value": v, "qrCode": EXAMPLE_CODE, "externalId": "qr-1"},
        "value",
        "PIX_INVALID_AMOUNT",
    ),
    Operation("POST", "/api/pix/cash-in", cash_in, "transaction.value"),
    Operation("POST", "/api/pix/cash-in", lambda v: cash_in(splits=[split(v)]), "splits.0.value"),
    Operation("POST", "/sandbox/pix/incoming", lambda v: {"value": v, "payer": PAYER}, "value"),
    Operation("POST", f"/api/pix/refund-in/{ANY_ID}", lambda v: {"refundValue": v}, "refundValue"),
    Operation("POST", f"/sandbox/pix/{ANY_ID}/refund-out", lambda v: {"value": v}, "value"),
    Operation(
        "POST",
        "/dict/pix",
        lambda v: {"pixKey": "maria@example.com", "payment": {"currency": "BRL", "amount": v}},
        "payment.amount",
        headers=(("x-idempotency-key", str(uuid.uuid4())),),
    ),
    Operation("PUT", f"/cob/{TXID}", cob, "valor.original"),
    Operation("PATCH", f"/cob/{TXID}", cob, "valor.original"),
    Operation("PUT", f"/pix/{E2E}/devolucao/d1", lambda v: {"valor": v}, "valor"),
]
CENTRAL_BANK = {"valor.original", "valor"}


def lines(response: httpx.Response) -> list[str]:
    """The `field: reason` lines of an error, in any of the three families."""
    body = response.json()
    if "violations" in body.get("details", {}):
        return list(body["details"]["violations"])
    message = body["message"]
    return message if isinstance(message, list) else [message]


async def send(
    client: httpx.AsyncClient, operation: Operation, headers: dict[str, str], value: object
) -> httpx.Response:
    return await client.request(
        operation.method,
        operation.path,
        headers={**headers, **dict(operation.headers)},
        json=operation.body(value),
    )


def assert_refused(response: httpx.Response, operation: Operation, reason: str) -> None:
    assert response.status_code == 400, response.text
    if "code" in response.json():
        assert response.json()["code"] == operation.code, response.text
    assert f"{operation.field}: {reason}" in "\n".join(lines(response)), response.text


each_operation = pytest.mark.parametrize(
    "operation", OPERATIONS, ids=lambda o: f"{o.method} {o.path} {o.field}"
)


@pytest.fixture
async def headers(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    """A signed-in account holding 100.00."""
    return await bearer(client, await make_account(rt, balance="100.00"))


@each_operation
async def test_every_amount_field_takes_one_spelling(
    rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str], operation: Operation
) -> None:
    before = await footprint(rt)
    spelled = (
        [f"{value}.00" for value in ("１０", "١٠", "1e2")]
        if operation.field in CENTRAL_BANK
        else []
    )
    for value in [*BADLY_WRITTEN, *spelled]:
        response = await send(client, operation, headers, value)
        assert_refused(response, operation, "must be written with the digits 0-9 and a point")
    assert await footprint(rt) == before


@each_operation
async def test_every_amount_field_has_one_range(
    rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str], operation: Operation
) -> None:
    """1e10 to 1e17 answered 500 on cash-in: the BR Code's range was checked after validation."""
    before = await footprint(rt)
    if operation.field in CENTRAL_BANK:
        too_large = ["10000000000.00", "99999999999999999.99"]
        too_small = ["0.00"]
    else:  # as integers and in exponent form (httpx writes 1e16 as 1e+16)
        too_large = [10**exponent for exponent in range(10, 18)]
        too_large += [float(f"1e{exponent}") for exponent in range(10, 18)] + ["10000000000"]
        too_small = [0, "0", "0.00", 0.001, -1, -0.01]
    for value in too_large:
        response = await send(client, operation, headers, value)
        assert response.status_code == 400, (value, response.text)
        if not isinstance(value, str):
            assert_refused(response, operation, "must be from 0.01 to 9999999999.99")
    for value in too_small:
        response = await send(client, operation, headers, value)
        assert response.status_code == 400, (value, response.text)
    assert await footprint(rt) == before


async def test_the_ceiling_is_accepted_and_fits_a_br_code(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    headers = await bearer(client, await make_account(rt))
    for value in (HIGHEST, 9999999999.99, "0.01"):
        response = await client.post("/api/pix/cash-in", headers=headers, json=cash_in(value))
        assert response.status_code == 201, response.text
        assert brcode.decode(response.json()["pixCode"]).amount_cents == to_cents(value)
    cob_created = await client.put(f"/cob/{TXID}", headers=headers, json=cob(HIGHEST))
    assert cob_created.status_code == 201, cob_created.text
    assert brcode.decode(cob_created.json()["pixCopiaECola"]).amount_cents == MAX_AMOUNT


async def post_json(
    client: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    body: dict[str, Any],
    **numbers: str,
) -> httpx.Response:
    """POST `body` with the numbers named in `numbers` spelled exactly as given (a float would
    round `1.0000000000000000000001`; `"0"` in `body` marks where each goes)."""
    text = orjson.dumps(body).decode()
    for name, written in numbers.items():
        text = text.replace(f'"{name}":"0"', f'"{name}":{written}')
    return await client.post(
        path, content=text.encode(), headers={**headers, "Content-Type": "application/json"}
    )


async def test_json_numbers_are_read_exactly(rt: Runtime, client: httpx.AsyncClient) -> None:
    """1.0000000000000000000001 was read through a float as 1.0 and paid 1.00."""
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    almost_one = "1.0000000000000000000001"
    paid = await post_json(client, "/api/pix/cash-out", headers, cash_out("0"), value=almost_one)
    assert paid.status_code == 400 and paid.json()["code"] == "PIX_INVALID_AMOUNT", paid.text
    assert paid.json()["message"] == ["value: the amount has more than 2 decimal places"]
    charged = await post_json(client, "/api/pix/cash-in", headers, cash_in("0"), value=almost_one)
    assert charged.json()["message"] == [
        "transaction.value: the amount has more than 2 decimal places"
    ]
    assert await balance(rt, account.account_id) == (10000, 0)
    assert (await footprint(rt))["transactions"] == 0


@pytest.mark.parametrize(
    "written", ["1." + "0" * 900_000 + "1", "0." + "0" * 900_000 + "1", "1." + "0" * 900_000]
)
async def test_a_number_written_with_a_million_digits_is_cheap(
    rt: Runtime, client: httpx.AsyncClient, written: str
) -> None:
    """Converting its digits to an integer (Python refuses past 4,300) answered 500."""
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    paid = await post_json(client, "/api/pix/cash-out", headers, cash_out("0"), value=written)
    if written.endswith("1"):
        assert paid.status_code == 400 and paid.json()["code"] == "PIX_INVALID_AMOUNT"
    else:  # exactly 1.00, however many zeros it is written with
        assert paid.status_code == 201, paid.text
        await drain(rt)
    split_body = cash_in(splits=[split("0", "FIXED")])
    charged = await post_json(client, "/api/pix/cash-in", headers, split_body, value=written)
    assert charged.status_code == (400 if written.endswith("1") else 201), charged.text


@pytest.mark.parametrize("kind", ["PERCENTAGE", "FIXED"])
@pytest.mark.parametrize("written", ["1e400", "1e308", "9" * 400, "1e-400", "-1e400"])
@pytest.mark.parametrize("as_string", [True, False], ids=["string", "number"])
async def test_huge_split_values_are_400_not_500(
    rt: Runtime, client: httpx.AsyncClient, kind: str, written: str, as_string: bool
) -> None:
    """decimal.InvalidOperation in quantize made these a 500."""
    headers = await bearer(client, await make_account(rt))
    value = f'"{written}"' if as_string else written
    response = await post_json(
        client, "/api/pix/cash-in", headers, cash_in(splits=[split("0", kind)]), value=value
    )
    assert response.status_code == 400, response.text
    assert [line.split(": ")[0] for line in response.json()["message"]] == ["splits.0.value"]


async def fund(rt: Runtime, account_id: int, cents: int) -> None:
    """Sandbox money by the ledger's own move (a seed past one amount's range)."""
    async with rt.db.begin() as conn:
        await conn.execute("SELECT ledger_fund($1, $2, 'test')", account_id, cents)


class TestExactAnswers:
    """A balance read `3.135287815597785e+16`: answers carried amounts as floats."""

    async def test_balances_at_the_top_of_the_range(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await fund(rt, account.account_id, MAX_CENTS)
        headers = await bearer(client, account)
        standard = await client.get("/api/balance", headers=headers)
        assert b'"grossBalance":92233720368547758.07' in standard.content
        assert b'"blockedBalance":0.00,"netBalance":92233720368547758.07' in standard.content
        central_bank = await client.get("/accounts/balances", headers=headers)
        assert (
            b'"balanceAmount":{"available":92233720368547758.07,"blocked":0.00,"overdraft":0.00}'
            in central_bank.content
        )

    async def test_transactions_and_webhooks_carry_two_decimals(
        self, rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
        account = await make_account(rt)
        await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url("/v1"))
        headers = await bearer(client, account)
        for value in (HIGHEST, "10.5"):
            incoming = {"value": value, "payer": PAYER}
            received = await client.post("/sandbox/pix/incoming", headers=headers, json=incoming)
            assert received.status_code == 201, received.text
        listed = await client.get("/api/transactions", headers=headers)
        assert b'"originalAmount":9999999999.99,"feeAmount":0.00,"finalAmount":9999999999.99' in (
            listed.content
        )
        assert b'"originalAmount":10.50,' in listed.content
        await drain(rt)
        bodies = [delivery.body for delivery in receiver.at("/v1")]
        assert any(b'"originalAmount":9999999999.99,' in body for body in bodies)
        assert any(b'"feeAmount":0.00,"originalAmount":10.50,' in body for body in bodies)

    async def test_med_webhooks_carry_two_decimals(
        self, rt: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        """A MED case's amounts come back from the event's jsonb as floats (`10.5`)."""
        rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
        account = await make_account(rt, balance="100")
        await webhooks.add(rt, account.account_id, event_type="med_created", url=receiver.url("/m"))
        headers = await bearer(client, account)
        incoming = {"value": "10.50", "payer": PAYER}
        received = await client.post("/sandbox/pix/incoming", headers=headers, json=incoming)
        assert received.status_code == 201, received.text
        opened = await client.post(
            "/sandbox/med", json={"endToEndId": received.json()["endToEndId"]}, headers=headers
        )
        assert opened.status_code == 201, opened.text
        await drain(rt)
        (delivery,) = receiver.at("/m")
        assert b'"amount":10.50,' in delivery.body
        assert b'"blockedAmount":10.50,' in delivery.body


class TestStoredSums:
    """A credit past what a bigint holds answered 500 (bigint out of range)."""

    async def test_a_credit_past_the_largest_balance_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await fund(rt, account.account_id, MAX_CENTS - 100)
        headers = await bearer(client, account)
        before = await footprint(rt)
        refused = await client.post(
            "/sandbox/pix/incoming", headers=headers, json={"value": "1.01", "payer": PAYER}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["code"] == "TOTAL_OUT_OF_RANGE"
        assert "92233720368547758.07" in refused.json()["message"]
        assert await footprint(rt) == before
        assert await balance(rt, account.account_id) == (MAX_CENTS - 100, 0)
        accepted = await client.post(
            "/sandbox/pix/incoming", headers=headers, json={"value": "1.00", "payer": PAYER}
        )
        assert accepted.status_code == 201, accepted.text
        assert await balance(rt, account.account_id) == (MAX_CENTS, 0)

    async def test_a_charge_that_would_overflow_its_receiver_is_not_paid(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        charge = await client.post("/api/pix/cash-in", headers=headers, json=cash_in(HIGHEST))
        await fund(rt, account.account_id, MAX_CENTS - MAX_AMOUNT + 1)
        before = await footprint(rt)
        paid = await client.post(
            "/sandbox/pix/pay",
            headers=headers,
            json={"pixCode": charge.json()["pixCode"], "payer": PAYER},
        )
        assert paid.status_code == 400 and paid.json()["code"] == "TOTAL_OUT_OF_RANGE"
        assert await footprint(rt) == before

    async def test_a_day_of_outgoing_past_what_can_be_counted_is_refused(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100.00")
        async with rt.db.begin() as conn:
            await conn.execute(
                "UPDATE accounts SET daily_limit = $2 WHERE id = $1", account.account_id, MAX_CENTS
            )
            await conn.execute(
                "INSERT INTO limit_usage (account_id, bucket, used) "
                "VALUES ($1, limit_bucket(now()), $2)",
                account.account_id,
                MAX_CENTS - 10,
            )
        headers = await bearer(client, account)
        before = await footprint(rt)
        response = await client.post("/api/pix/cash-out", headers=headers, json=cash_out(1))
        assert response.status_code == 400 and response.json()["code"] == "TOTAL_OUT_OF_RANGE"
        assert await footprint(rt) == before
        assert await balance(rt, account.account_id) == (10000, 0)
        async with rt.db.begin() as conn:  # the made-up usage, which no transaction accounts for
            await conn.execute("DELETE FROM limit_usage WHERE account_id = $1", account.account_id)


def test_a_real_serve_holds_amounts_and_names(rt: Runtime, database_url: str) -> None:
    """The cases above against `pixgate serve`, for an account `pixgate accounts create` made
    with a name in another script."""
    env = server_env(database_url)
    made = subprocess.run(
        [PIXGATE, "accounts", "create", "--name", "東京商店", "--json"],
        env=env,
        capture_output=True,
        check=True,
    )
    account = orjson.loads(made.stdout)
    asyncio.run(
        sql(
            database_url,
            "SELECT ledger_fund($1, $2, 'test')",
            account["accountId"],
            MAX_CENTS - 100,
        )
    )
    certificate = {"X-SSL-Client-Cert": cert_header(account["certificatePem"])}
    with serving(database_url) as base, httpx.Client(base_url=base) as client:
        credentials = {"clientId": account["clientId"], "clientSecret": account["clientSecret"]}
        token = client.post("/api/auth/token", headers=certificate, json=credentials)
        headers = {**certificate, "Authorization": f"Bearer {token.json()['access_token']}"}
        for value in [10**exponent for exponent in range(10, 18)] + ["１０", "1e2", "1_000"]:
            refused = client.post("/api/pix/cash-in", headers=headers, json=cash_in(value))
            assert refused.status_code == 400, refused.text
        huge_split = orjson.dumps(cash_in(splits=[split("0")])).replace(
            b'"value":"0"', b'"value":1e400'
        )
        refused = client.post(
            "/api/pix/cash-in",
            headers={**headers, "Content-Type": "application/json"},
            content=huge_split,
        )
        assert refused.status_code == 400, refused.text
        charge = client.post("/api/pix/cash-in", headers=headers, json=cash_in("1.00"))
        assert brcode.decode(charge.json()["pixCode"]).merchant_name == brcode.NAME_FALLBACK
        paid = client.post(
            "/sandbox/pix/pay",
            headers=headers,
            json={"pixCode": charge.json()["pixCode"], "payer": PAYER},
        )
        assert paid.status_code == 201, paid.text
        balance_now = client.get("/api/balance", headers=headers)
        assert b'"netBalance":92233720368547758.07' in balance_now.content
        overflow = client.post(
            "/sandbox/pix/incoming", headers=headers, json={"value": "0.01", "payer": PAYER}
        )
        assert overflow.status_code == 400 and overflow.json()["code"] == "TOTAL_OUT_OF_RANGE"
        assert (
            client.get("/api/balance", headers=headers).content.count(b"92233720368547758.07") == 2
        )


async def sql(database_url: str, query: str, *args: object) -> None:
    """One statement on a fresh connection (the test's pool belongs to another loop)."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(query, *args)
    finally:
        await conn.close()
