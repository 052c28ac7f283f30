"""Routes that reach another account's object on purpose (the isolation sweep's
BY_DESIGN), and the sandbox's DICT keys: each with its own test."""

from __future__ import annotations

import base64
import json
import uuid
from decimal import Decimal
from typing import Any

import httpx

from tests.app.isolation_calls import PAY, PAYER, Call, call_as_b, dict_key, own_transaction
from tests.app.isolation_world import A_KEY, CPF, HOLDER, World, changes, leaks, leaves, snapshot
from tests.support import drain


class TestByDesign:
    async def test_location_shows_only_the_named_charge(self, world: World) -> None:
        before = await snapshot(world)
        for role, where in [(r, w) for r in ("open", "cob") for w in ("/loc/", "/qr/v2/")]:
            charge = world.charge[role]
            response = await world.client.get(where + charge["location_token"])
            assert response.status_code == 200, response.text
            assert response.headers["content-type"].startswith("application/jose")
            encoded = response.text.split(".")[1]
            payload = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
            assert payload["txid"] == charge["txid"]
            assert payload["valor"]["original"] == f"{Decimal(charge['amount']) / 100:.2f}"
            # the charge's own fields (devedor, chave, solicitacaoPagador...) may show; a
            # cash-in charge's chave is A's own key
            own = frozenset(
                {
                    charge["txid"],
                    payload["valor"]["original"],
                    payload["chave"],
                    *(str(v) for v in leaves(charge["body"])),
                }
            )
            shown = httpx.Response(200, json=payload)
            assert leaks(world, "", shown, allowed=own) == [], payload
        paid = await world.client.get(f"/loc/{world.charge['paid']['location_token']}")
        assert paid.status_code == 410 and leaks(world, "", paid) == [], paid.text
        paid = await world.client.get(f"/qr/v2/{world.charge['paid']['location_token']}")
        assert paid.status_code == 404 and leaks(world, "", paid) == [], paid.text
        for where in ("/loc/", "/qr/v2/"):
            assert (await world.client.get(where + uuid.uuid4().hex)).status_code == 404
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
