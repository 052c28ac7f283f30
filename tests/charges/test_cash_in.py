"""POST /api/pix/cash-in on real PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
import io
import uuid
from datetime import datetime
from typing import Any

import httpx
import pytest
import zxingcpp
from brcode.utils.brcodeId import jsonFromBrcode  # type: ignore[import-untyped]
from PIL import Image

from pixgate.core.pix.brcode import decode
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account

PATH = "/api/pix/cash-in"
CPF = "52998224725"
CNPJ = "11222333000181"
EVP = "123e4567-e12b-42d3-a456-426614174000"


def charge_body(
    value: object = "10.00", external_id: str | None = None, **changes: Any
) -> dict[str, Any]:
    """A valid cash-in body; `transaction`, `payer`, `splits`, `additionalInfo` override parts."""
    body: dict[str, Any] = {
        "transaction": {
            "value": value,
            "description": "Pedido 42",
            "externalId": external_id or f"ext-{uuid.uuid4()}",
        },
        "payer": {"fullName": "Maria da Silva", "document": CPF},
    }
    for key, change in changes.items():
        if isinstance(change, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **change}
        else:
            body[key] = change
    return body


def split(value: object, kind: str = "PERCENTAGE", **changes: Any) -> dict[str, Any]:
    return {
        "pixKey": EVP,
        "pixKeyType": "RANDOM",
        "name": "Parceiro",
        "document": CNPJ,
        "type": kind,
        "value": value,
        **changes,
    }


async def create_charge(
    client: httpx.AsyncClient, headers: dict[str, str], **kwargs: Any
) -> dict[str, Any]:
    response = await client.post(PATH, json=charge_body(**kwargs), headers=headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def counts(rt: Runtime) -> tuple[int, int, int]:
    """Rows of transactions, charges and charge_splits: what a refused request must not add."""
    async with rt.db.connection() as conn:
        row = await conn.fetchrow(
            "SELECT (SELECT count(*) FROM transactions) AS t, (SELECT count(*) FROM charges) AS c,"
            " (SELECT count(*) FROM charge_splits) AS s"
        )
    assert row is not None
    return row["t"], row["c"], row["s"]


class TestCreate:
    async def test_pending_charge_with_a_dynamic_code(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, name="Padaria São João do Ipiranga Ltda")
        headers = await bearer(client, account)
        response = await client.post(
            PATH,
            json=charge_body(
                "12.34",
                "pedido-1",
                transaction={"expirationTime": 3600},
                additionalInfo={"pedido": "42"},
            ),
            headers=headers,
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["status"] == "PENDING"
        assert body["externalId"] == "pedido-1"
        assert uuid.UUID(body["transactionId"]) and uuid.UUID(body["correlationId"])
        assert "qrCodeImage" not in body
        created = datetime.fromisoformat(body["generateTime"])
        expires = datetime.fromisoformat(body["expirationDate"])
        assert body["generateTime"].endswith("Z") and body["expirationDate"].endswith("Z")
        assert (expires - created).total_seconds() == 3600

        code = decode(body["pixCode"])
        assert code.amount_cents == 1234
        assert code.point_of_initiation == "12"
        assert code.merchant_name == "Padaria Sao Joao do Ipira"  # transliterated, 25
        assert code.merchant_city == rt.settings.merchant_city
        async with rt.db.connection() as conn:
            charge = await conn.fetchrow("SELECT * FROM charges")
            tx = await conn.fetchrow("SELECT * FROM transactions")
        assert charge is not None and tx is not None
        assert code.location_url == (
            f"{rt.settings.public_url.split('://')[1]}/qr/v2/{charge['location_token']}"
        )
        assert (charge["kind"], charge["status"], charge["amount"]) == ("cash_in", "PENDING", 1234)
        assert charge["pix_code"] == body["pixCode"]
        assert charge["transaction_id"] == tx["id"]
        assert (tx["operation"], tx["kind"], tx["status"]) == ("PAYMENT", "cash_in", "PENDING")
        assert str(tx["transaction_id"]) == body["transactionId"]
        assert tx["details"]["additionalInfo"] == {"pedido": "42"}
        assert tx["details"]["correlationId"] == body["correlationId"]

    async def test_a_third_party_decoder_reads_the_code(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, name="Loja")
        body = await create_charge(client, await bearer(client, account), value="0.99")
        fields = jsonFromBrcode(body["pixCode"])  # starkbank-brcode
        assert fields["00"] == "01"
        assert fields["26"]["00"] == "br.gov.bcb.pix"
        assert fields["26"]["25"].startswith(rt.settings.public_url.split("://")[1] + "/qr/v2/")
        assert fields["54"] == "0.99"
        assert fields["59"] == "Loja"
        assert fields["62"]["05"] == "***"

    async def test_qr_image_scans_back_to_the_pix_code(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        body = await create_charge(
            client, await bearer(client, account), transaction={"generateQrCode": True}
        )
        prefix = "data:image/png;base64,"
        assert body["qrCodeImage"].startswith(prefix)
        png = base64.b64decode(body["qrCodeImage"][len(prefix) :], validate=True)
        with Image.open(io.BytesIO(png)) as image:
            assert image.format == "PNG"
            results = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
        assert [r.text for r in results] == [body["pixCode"]]

    async def test_splits_are_stored_with_the_charge(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await create_charge(
            client,
            await bearer(client, account),
            value="100.00",
            splits=[
                split("33.33"),
                split(
                    "10.50",
                    "FIXED",
                    immediate=True,
                    pixKey="parceiro@example.com",
                    pixKeyType="EMAIL",
                ),
            ],
        )
        async with rt.db.connection() as conn:
            rows = await conn.fetch("SELECT * FROM charge_splits ORDER BY position")
        assert [(r["split_type"], str(r["value"]), r["immediate"]) for r in rows] == [
            ("PERCENTAGE", "33.3300", False),
            ("FIXED", "10.5000", True),
        ]
        assert all(r["amount"] is None and r["payout_id"] is None for r in rows)

    async def test_requires_a_token(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        response = await client.post(PATH, json=charge_body())
        assert response.status_code == 401
        assert await counts(rt) == (0, 0, 0)


INVALID: list[tuple[str, dict[str, Any]]] = [
    ("value zero", charge_body("0")),
    ("value three decimals", charge_body("1.001")),
    ("value missing", charge_body(transaction={"value": None})),
    ("description empty", charge_body(transaction={"description": ""})),
    ("description 141", charge_body(transaction={"description": "x" * 141})),
    ("externalId empty", charge_body(external_id="", transaction={"externalId": ""})),
    ("expiration 29", charge_body(transaction={"expirationTime": 29})),
    ("expiration 604801", charge_body(transaction={"expirationTime": 604801})),
    ("payer name 101", charge_body(payer={"fullName": "x" * 101})),
    ("payer document digits", charge_body(payer={"document": "52998224724"})),
    ("payer missing", {k: v for k, v in charge_body().items() if k != "payer"}),
    ("additionalInfo 11", charge_body(additionalInfo={f"k{i}": "v" for i in range(11)})),
    ("additionalInfo not strings", charge_body(additionalInfo={"k": 1})),
    ("11 splits", charge_body("100", splits=[split("1")] * 11)),
    ("split key type", charge_body(splits=[split("10", pixKey="not-a-uuid")])),
    ("split cpf digits", charge_body(splits=[split("10", pixKey="52998224724", pixKeyType="CPF")])),
    ("split document digits", charge_body(splits=[split("10", document="11222333000180")])),
    ("split name 256", charge_body(splits=[split("10", name="x" * 256)])),
    ("split pixKey 256", charge_body(splits=[split("10", pixKey="a" * 256)])),
    ("split fixed decimals", charge_body(splits=[split("1.001", "FIXED")])),
    ("split value zero", charge_body(splits=[split("0", "FIXED")])),
    ("split type", charge_body(splits=[split("10", "OTHER")])),
    ("splits above amount", charge_body("10.00", splits=[split("6", "FIXED"), split("40.1")])),
    ("percentages above 100", charge_body("10.00", splits=[split("60"), split("40.01")])),
    ("unknown field", charge_body(transaction={"amount": 1})),
]


class TestValidation:
    @pytest.mark.parametrize(("case", "body"), INVALID, ids=[c for c, _ in INVALID])
    async def test_400_envelope_and_nothing_written(
        self, rt: Runtime, client: httpx.AsyncClient, case: str, body: dict[str, Any]
    ) -> None:
        account = await make_account(rt)
        response = await client.post(PATH, json=body, headers=await bearer(client, account))
        assert response.status_code == 400, response.text
        error = response.json()
        assert error["statusCode"] == 400
        assert error["code"] == "HTTP_ERROR"
        assert error["error"] == "Bad Request"
        assert error["path"] == PATH and error["method"] == "POST"
        assert isinstance(error["message"], list) and error["message"]
        assert error["userMessage"] and error["errorId"] and error["timestamp"].endswith("Z")
        assert "errorCode" not in error
        assert await counts(rt) == (0, 0, 0)

    @pytest.mark.parametrize(
        ("changes", "expected"),
        [
            (  # the amounts' range and spelling, with the body's shape
                {
                    "transaction": {"value": "1.001", "description": ""},
                    "splits": [split("1e400")],
                },
                ["splits.0.value", "transaction.description", "transaction.value"],
            ),
            (  # then the service's rules, once the body has its shape
                {"payer": {"document": "11111111111"}, "splits": [split("1", pixKey="x")]},
                ["payer.document", "splits.0.pixKey"],
            ),
        ],
    )
    async def test_every_problem_is_listed(
        self, rt: Runtime, client: httpx.AsyncClient, changes: dict[str, Any], expected: list[str]
    ) -> None:
        account = await make_account(rt)
        body = charge_body("1.00", **changes)
        response = await client.post(PATH, json=body, headers=await bearer(client, account))
        assert response.status_code == 400
        fields = sorted(m.split(":")[0].split(" ")[0] for m in response.json()["message"])
        assert fields == expected

    async def test_splits_above_the_amount_net_of_the_fee(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        async with rt.db.begin() as conn:
            await conn.execute("""UPDATE accounts SET fees = '{"cash_in": {"fixed": "1.00"}}'""")
        response = await client.post(
            PATH,
            json=charge_body("10.00", splits=[split("95")]),
            headers=await bearer(client, account),
        )
        assert response.status_code == 400
        assert "net of the cash-in fee (9.00)" in response.json()["message"][0]
        assert await counts(rt) == (0, 0, 0)

    async def test_below_the_provider_minimum_is_a_business_error(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await client.post(
            PATH,
            json=charge_body(transaction={"expirationTime": 59}),
            headers=await bearer(client, account),
        )
        assert response.status_code == 400
        error = response.json()
        assert error["code"] == error["errorCode"] == "PROVIDER_EXPIRATION_BELOW_MINIMUM"
        assert await counts(rt) == (0, 0, 0)
        ok = await client.post(
            PATH,
            json=charge_body(transaction={"expirationTime": 60}),
            headers=await bearer(client, account),
        )
        assert ok.status_code == 201


class TestDuplicatesAndProvider:
    async def test_reused_external_id(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        first = await create_charge(client, headers, external_id="pedido-7")
        response = await client.post(
            PATH, json=charge_body(external_id="pedido-7"), headers=headers
        )
        assert response.status_code == 400
        error = response.json()
        assert error["code"] == error["errorCode"] == "PIX_DUPLICATE_EXTERNAL_ID"
        assert error["details"] == {
            "externalId": "pedido-7",
            "existingTransactionId": first["transactionId"],
        }
        assert await counts(rt) == (1, 1, 0)

    async def test_external_ids_are_shared_with_cash_out(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="10.00")
        headers = await bearer(client, account)
        sent = await client.post(
            "/api/pix/cash-out",
            headers=headers,
            json={
                "value": 1,
                "externalId": "shared-1",
                "details": {"key": EVP, "keyType": "RANDOM", "name": "X", "document": CPF},
            },
        )
        assert sent.status_code == 201
        response = await client.post(
            PATH, json=charge_body(external_id="shared-1"), headers=headers
        )
        assert response.json()["code"] == "PIX_DUPLICATE_EXTERNAL_ID"

    async def test_other_accounts_may_reuse_an_external_id(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        one, two = await make_account(rt), await make_account(rt)
        await create_charge(client, await bearer(client, one), external_id="same")
        await create_charge(client, await bearer(client, two), external_id="same")
        assert await counts(rt) == (2, 2, 0)

    async def test_concurrent_duplicates_create_one_charge(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = await bearer(client, account)
        responses = await asyncio.gather(
            *(
                client.post(PATH, json=charge_body(external_id="race"), headers=headers)
                for _ in range(8)
            )
        )
        assert sorted(r.status_code for r in responses) == [201] + [400] * 7
        assert await counts(rt) == (1, 1, 0)

    async def test_provider_unavailable_leaves_nothing_behind(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        headers = {**await bearer(client, account), "X-Sandbox-Scenario": "provider_unavailable"}
        response = await client.post(PATH, json=charge_body(splits=[split("10")]), headers=headers)
        assert response.status_code == 500
        error = response.json()
        assert error["code"] == "PROVIDER_UNAVAILABLE"
        assert error["statusCode"] == 500 and error["errorId"]
        assert await counts(rt) == (0, 0, 0)
        async with rt.db.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM jobs") == 0
            assert await conn.fetchval("SELECT count(*) FROM ledger_postings") == 0

    async def test_unknown_scenario(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        headers = {**await bearer(client, account), "X-Sandbox-Scenario": "NOPE"}
        response = await client.post(PATH, json=charge_body(), headers=headers)
        assert response.status_code == 400
        assert response.json()["code"] == "SANDBOX_SCENARIO_UNKNOWN"
        assert await counts(rt) == (0, 0, 0)
