"""Hostile input refused at the boundary (security item 6), through HTTP.

PostgreSQL cannot store U+0000, and a few values overflow its integers or Python's dates:
each used to reach a statement and answer 500. Now each is a 400 in the route's family, and
nothing is written. An unexpected exception answers 500 on a connection that stays open.
"""

from __future__ import annotations

import json
import socket
import uuid
from typing import Any

import httpx
import pytest

from pixgate.accounts.service import accounts, balances
from pixgate.core.http.intake.params import MAX_PAGE
from pixgate.ledger.service import transactions
from pixgate.runtime import Runtime
from tests.helpers import SIMPLE_BODY, assert_general_error, bearer, cert_header, make_account
from tests.processes import serving

CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"
TXID = "a" * 10 + "B" * 10 + "1234567890"
NUL = "\u0000"
ENVELOPE = {
    "statusCode",
    "timestamp",
    "path",
    "method",
    "code",
    "message",
    "userMessage",
    "errorId",
    "error",
}


def assert_envelope_400(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) >= ENVELOPE and body["code"] == "HTTP_ERROR", body
    assert body["message"] == [f"{field}: must not contain the NUL character (U+0000)"]


def assert_simple_400(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == SIMPLE_BODY, body
    assert body["message"] == [f"{field}: must not contain the NUL character (U+0000)"]


def assert_general_400(response: httpx.Response, field: str) -> None:
    body = assert_general_error(response, 400, "HTTP_ERROR")
    assert body["message"] == f"{field}: must not contain the NUL character (U+0000)"


def cash_out(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "value": 10,
        "externalId": f"ext-{uuid.uuid4()}",
        "description": "pagamento",
        "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
    }
    return body | changes


async def rows(rt: Runtime, table: str) -> int:
    async with rt.db.connection() as conn:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))


@pytest.fixture
async def account(rt: Runtime) -> accounts.NewAccount:
    return await make_account(rt, balance="100")


@pytest.fixture
async def headers(client: httpx.AsyncClient, account: accounts.NewAccount) -> dict[str, str]:
    return await bearer(client, account)


class TestNulInBodies:
    async def test_full_envelope_names_the_field_and_writes_nothing(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        body = cash_out(
            details={"key": EVP, "keyType": "RANDOM", "name": f"Ful{NUL}ano", "document": CPF}
        )
        response = await client.post("/api/pix/cash-out", json=body, headers=headers)
        assert_envelope_400(response, "details.name")
        assert await rows(rt, "transactions") == 0

    async def test_the_first_field_in_document_order_is_named(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        body = {
            "transaction": {"value": 1, "description": f"d{NUL}", "externalId": f"e{NUL}"},
            "payer": {"fullName": f"f{NUL}", "document": CPF},
        }
        response = await client.post("/api/pix/cash-in", json=body, headers=headers)
        assert_envelope_400(response, "transaction.description")

    async def test_a_key_of_an_object(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        body = {
            "transaction": {"value": 1, "description": "d", "externalId": "e"},
            "payer": {"fullName": "f", "document": CPF},
            "additionalInfo": {f"k{NUL}": "v"},
        }
        response = await client.post("/api/pix/cash-in", json=body, headers=headers)
        assert_envelope_400(response, "additionalInfo.k\\u0000")

    async def test_simple_body_family_and_array_items(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        cob = {
            "calendario": {"expiracao": 3600},
            "valor": {"original": "1.00"},
            "infoAdicionais": [{"nome": "ok", "valor": "ok"}, {"nome": f"n{NUL}", "valor": "v"}],
        }
        assert_simple_400(
            await client.put(f"/cob/{TXID}", json=cob, headers=headers), "infoAdicionais.1.nome"
        )
        transfer = {
            "pixKey": "a@b.com",
            "payment": {"currency": "BRL", "amount": 1},
            "paymentFlow": f"p{NUL}",
        }
        response = await client.post(
            "/dict/pix", json=transfer, headers={**headers, "x-idempotency-key": str(uuid.uuid4())}
        )
        assert_simple_400(response, "paymentFlow")
        assert await rows(rt, "charges") == 0

    async def test_general_envelope_family(
        self, rt: Runtime, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        body = {"value": 1, "payer": {"name": f"n{NUL}", "document": CPF}}
        response = await client.post("/sandbox/pix/incoming", json=body, headers=headers)
        assert_general_400(response, "payer.name")
        body = {"value": 1, "qrCode": "000201" + "x" * 60, "externalId": f"e{NUL}"}
        response = await client.post("/api/pix/cash-out-qrcode", json=body, headers=headers)
        assert_general_400(response, "externalId")
        assert await rows(rt, "transactions") == 0

    async def test_utf16_json_is_decoded_before_the_check(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        raw = json.dumps(cash_out(description=f"a{NUL}b")).encode("utf-16")
        response = await client.post(
            "/api/pix/cash-out",
            content=raw,
            headers={**headers, "Content-Type": "application/json"},
        )
        assert_envelope_400(response, "description")

    @pytest.mark.parametrize("depth", [900, 100_000])
    @pytest.mark.parametrize("content_type", [{"Content-Type": "application/json"}, {}])
    async def test_deep_nesting_is_a_400_not_a_crash(
        self,
        client: httpx.AsyncClient,
        headers: dict[str, str],
        depth: int,
        content_type: dict[str, str],
    ) -> None:
        raw = "[" * depth + '"\\u0000"' + "]" * depth
        response = await client.post(
            "/api/pix/cash-out", content=raw, headers={**headers, **content_type}
        )
        assert response.status_code == 400, response.text

    async def test_an_escaped_backslash_before_u0000_is_text_not_nul(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        body = cash_out(description="C:\\u0000")  # a backslash, then the letters u0000
        response = await client.post("/api/pix/cash-out", json=body, headers=headers)
        assert response.status_code == 201, response.text


class TestNulInParametersAndHeaders:
    async def test_unauthenticated_charge_location(self, client: httpx.AsyncClient) -> None:
        assert_simple_400(await client.get("/loc/abc%00def"), "token")

    async def test_path_parameters(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        assert_general_400(
            await client.post("/api/resend-webhook/a%00b", headers=headers), "transactionIdentifier"
        )
        assert_general_400(
            await client.get("/api/pix/transactions/pix-key/a%00%40b.com", headers=headers),
            "pixKey",
        )

    async def test_query_parameters(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        for name in ("externalId", "endToEndId"):
            response = await client.get(
                "/api/transactions", params={name: f"x{NUL}"}, headers=headers
            )
            assert_general_400(response, name)

    async def test_headers(self, client: httpx.AsyncClient, headers: dict[str, str]) -> None:
        response = await client.post(
            "/dict/pix", json={}, headers={**headers, "x-idempotency-key": f"{uuid.uuid4()}{NUL}"}
        )
        assert_simple_400(response, "x-idempotency-key")


class TestResendIdentifiers:
    @pytest.mark.parametrize("identifier", ["\u00b2", "1\u00b3", "evt_\u00b2"])
    async def test_digits_int_cannot_read_are_looked_up_as_text(
        self, client: httpx.AsyncClient, headers: dict[str, str], identifier: str
    ) -> None:
        """`str.isdigit` takes superscripts that `int` refuses: such an identifier is an
        externalId to look up, not a number (it answered 500)."""
        response = await client.post(f"/api/resend-webhook/{identifier}", headers=headers)
        body = assert_general_error(response, 404, "NOT_FOUND")
        assert identifier in body["message"]

    @pytest.mark.parametrize("identifier", ["evt_9223372036854775808", "evt_" + "9" * 40])
    async def test_event_ids_past_bigint_are_not_found(
        self, client: httpx.AsyncClient, headers: dict[str, str], identifier: str
    ) -> None:
        response = await client.post(f"/api/resend-webhook/{identifier}", headers=headers)
        assert_general_error(response, 404, "NOT_FOUND")


class TestOverflow:
    @pytest.mark.parametrize(
        "path", ["/api/transactions", "/api/pix/transactions/pix-key/a@b.com", "/api/events"]
    )
    async def test_huge_page_is_400_and_the_largest_page_is_empty(
        self, client: httpx.AsyncClient, headers: dict[str, str], path: str
    ) -> None:
        for page in (10**19, 10**18, MAX_PAGE + 1):
            response = await client.get(path, params={"page": page}, headers=headers)
            assert_general_error(response, 400, "HTTP_ERROR")
        largest = await client.get(path, params={"page": MAX_PAGE, "size": 100}, headers=headers)
        assert largest.status_code == 200, largest.text
        assert largest.json()["data"] == []

    @pytest.mark.parametrize(
        "params",
        [
            {"startDate": "9999-12-30", "endDate": "9999-12-31"},
            {"endDate": "0001-01-05"},
        ],
    )
    async def test_statement_dates_at_the_ends_of_the_calendar(
        self, client: httpx.AsyncClient, headers: dict[str, str], params: dict[str, str]
    ) -> None:
        response = await client.get("/api/transactions", params=params, headers=headers)
        assert_general_error(response, 400, "HTTP_ERROR")

    async def test_instants_outside_utc_years_1_to_9999(
        self, client: httpx.AsyncClient, headers: dict[str, str]
    ) -> None:
        for value in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
            response = await client.get("/api/events", params={"startDate": value}, headers=headers)
            assert_general_error(response, 400, "HTTP_ERROR")
        response = await client.post(
            "/sandbox/pix/incoming",
            headers=headers,
            json={
                "value": 1,
                "payer": {"name": "n", "document": CPF},
                "paidAt": "0001-01-01T00:00:00+14:00",
            },
        )
        assert_general_error(response, 400, "HTTP_ERROR")


async def test_an_unexpected_error_answers_in_the_family_of_its_route(
    client: httpx.AsyncClient, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(balances, "get", broken)
    monkeypatch.setattr(transactions, "statement", broken)
    response = await client.get("/accounts/balances", headers=headers)
    assert response.status_code == 500
    assert response.json() == {
        "statusCode": 500,
        "message": "Internal server error",
        "error": "Internal Server Error",
    }
    assert response.headers["x-request-id"]
    assert_general_error(
        await client.get("/api/transactions", headers=headers), 500, "INTERNAL_ERROR"
    )


def test_an_unexpected_error_keeps_the_connection_open(
    database_url: str, account: accounts.NewAccount
) -> None:
    """A real `pixgate serve`: an unknown time zone (a misconfiguration) makes the statement
    raise ZoneInfoNotFoundError, the kind of exception no handler expects. The client gets
    the general envelope's 500, and its next request goes over the same connection."""
    with (
        serving(database_url, timezone="Nowhere/Atlantis") as base,
        httpx.Client(base_url=base) as client,
    ):
        certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
        token = client.post(
            "/api/auth/token",
            headers=certificate,
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
        )
        assert token.status_code == 201, token.text
        headers = {"Authorization": f"Bearer {token.json()['access_token']}", **certificate}
        crashed = client.get("/api/transactions", headers=headers)
        assert_general_error(crashed, 500, "INTERNAL_ERROR")
        assert "Traceback" not in crashed.text
        after = client.get("/healthz")
        assert after.status_code == 200

        def local_address(response: httpx.Response) -> object:
            return response.extensions["network_stream"].get_extra_info("client_addr")

        assert local_address(after) == local_address(crashed) == local_address(token)


def test_the_server_refuses_a_nul_byte_in_any_header(database_url: str) -> None:
    """The app screens only the headers a route declares; uvicorn, under `pixgate serve`,
    refuses a NUL in any header field before the app sees it (RFC 9110 field values)."""
    with serving(database_url) as base:
        host, port = base.removeprefix("http://").split(":")
        for header in (b"X-Request-Id: a\x00b", b"X-Idempotency-Key: a\x00b"):
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n\r\n")
                assert sock.recv(64).startswith(b"HTTP/1.1 400 "), header


PATH_VALUES = {
    "txid": TXID,
    "token": "abc",
    "pixKey": "a@b.com",
    "chave": "a@b.com",
    "transactionIdentifier": "1",
    "id": "1",
    "e2eid": "E12345678202611241000abcdefghijk",
    "transactionId": "1",
}


def string_leaves(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in string_leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in string_leaves(item, (*path, i))]
    return []


def with_nul(value: Any, path: tuple[str | int, ...]) -> Any:
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] += NUL
    return copy


async def test_nul_in_every_string_of_every_documented_operation(
    app: Any, client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    """Each string of each operation's example body, and each string parameter, with a NUL:
    a 400 naming it, on every operation (the token routes' body is read by hand after the
    certificate checks and holds a UUID and a secret that is only hashed: not screened)."""
    document = app.openapi()
    schemas = document["components"]["schemas"]
    tried = 0
    for template, item in document["paths"].items():
        for method, operation in item.items():
            url = template.format(**PATH_VALUES)
            sent = {**headers, "x-idempotency-key": str(uuid.uuid4())}
            cases: list[tuple[str, dict[str, Any]]] = []
            content = operation.get("requestBody", {}).get("content", {})
            ref = content.get("application/json", {}).get("schema", {}).get("$ref")
            if ref and not template.endswith("/token"):
                example = schemas[ref.rsplit("/", 1)[-1]]["examples"][0]
                for leaf in string_leaves(example):
                    field = ".".join(map(str, leaf))
                    cases.append((field, {"url": url, "json": with_nul(example, leaf)}))
            for parameter in operation.get("parameters", []):
                name = parameter["name"]
                if parameter["in"] == "query":
                    cases.append((name, {"url": url, "params": {name: f"a{NUL}"}}))
                elif parameter["in"] == "path":
                    cases.append((name, {"url": template.format(**{**PATH_VALUES, name: "a%00"})}))
            for field, request in cases:
                response = await client.request(method, headers=sent, **request)
                assert response.status_code == 400, (method, template, field, response.text)
                body = response.json()  # an API Pix problem says it in `detail`
                reason = body["detail"] if "detail" in body else body["message"]
                assert f"{field}: must not contain" in str(reason), field
                tried += 1
    assert tried > 50
