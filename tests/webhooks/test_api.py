"""POST/GET /api/webhooks (disabled and enabled), resend and GET /api/events."""

from __future__ import annotations

import httpx

from pixgate.runtime import Runtime
from pixgate.webhooks.service import outbox as events
from tests.helpers import assert_general_error, bearer, make_account
from tests.processes import serving
from tests.support import drain
from tests.webhooks import refused_config as refused
from tests.webhooks.conftest import insert_transaction
from tests.webhooks.receiver import Receiver


async def _count(rt: Runtime, table: str) -> int:
    async with rt.db.connection() as conn:
        count: int = await conn.fetchval(f"SELECT count(*) FROM {table}")
        return count


async def _event(rt: Runtime, account_id: int, **kw: object) -> tuple[int, int]:
    async with rt.db.begin() as conn:
        tx = await insert_transaction(conn, account_id, **kw)  # type: ignore[arg-type]
        event_id = await events.record(
            conn, account_id=account_id, type="cash_out", transaction_id=tx
        )
    return tx, event_id


class TestDisabledByDefault:
    async def test_post_answers_success_false_and_persists_nothing(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        auth = await bearer(client, account)
        body = {"url": "https://hooks.example.com/x", "eventType": "cash_out"}
        response = await client.post("/api/webhooks", json=body, headers=auth)
        assert response.status_code == 200
        assert response.json()["success"] is False
        assert "disabled" in response.json()["message"]
        assert await _count(rt, "webhook_endpoints") == 0

    async def test_get_answers_that_the_api_is_off_and_names_the_setting(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        """The spec's empty list, which says in the same answer that the API is off: an empty
        list alone read as "none configured" while webhooks exist."""
        from pixgate.webhooks import service as webhooks

        account = await make_account(insecure)
        await webhooks.add(insecure, account.account_id, event_type="cash_in", url=receiver.url())
        response = await client.get("/api/webhooks", headers=await bearer(client, account))
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["webhooks"], body["total"], body["enabled"]) == ([], 0, False)
        assert body["accountId"] == account.account_id
        assert "PIXGATE_WEBHOOK_API_ENABLED=true" in body["message"]

    async def test_post_names_the_setting(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        body = {"url": "https://hooks.example.com/x", "eventType": "cash_out"}
        response = await client.post(
            "/api/webhooks", json=body, headers=await bearer(client, account)
        )
        assert "PIXGATE_WEBHOOK_API_ENABLED=true" in response.json()["message"]

    async def test_token_required(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        assert (await client.get("/api/webhooks")).status_code == 401


class TestEnabled:
    async def test_add_list_and_update_in_place(
        self, api_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        account = await make_account(api_on)
        auth = await bearer(client, account)
        body = {
            "url": receiver.url(),
            "eventType": "cash_out",
            "headers": [{"key": "X-Token", "value": "one"}],
        }
        created = await client.post("/api/webhooks", json=body, headers=auth)
        assert created.status_code == 200 and created.json()["success"] is True
        other = {"url": receiver.url("/other"), "eventType": "cash_out"}
        assert (await client.post("/api/webhooks", json=other, headers=auth)).status_code == 200
        again = {**body, "headers": [{"key": "X-Token", "value": "two"}], "version": "v2"}
        updated = await client.post("/api/webhooks", json=again, headers=auth)
        assert "updated" in updated.json()["message"]

        response = await client.get("/api/webhooks", headers=auth)
        listed = response.json()
        assert listed["accountId"] == account.account_id and listed["total"] == 2
        first = listed["webhooks"][0]
        assert set(first) >= {"id", "type", "url", "headers", "isActive", "createdAt"}
        # the value is masked as the dashboard and the command line show it: name only
        assert first["headers"] == {"X-Token": "******"} and first["version"] == "v2"
        assert '"two"' not in response.text
        assert first["type"] == "cash_out" and first["isActive"] is True
        assert first["createdAt"].endswith("Z")
        assert listed["webhooks"][1]["headers"] == {}

    async def test_every_400_changes_nothing(
        self, api_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        account = await make_account(api_on)
        auth = await bearer(client, account)
        api_on.settings = api_on.settings.model_copy(update={"allow_insecure_webhooks": False})
        cases = [
            {"url": "http://hooks.example.com/x", "eventType": "cash_out"},  # not HTTPS
            {"url": "https://10.1.2.3/x", "eventType": "cash_out"},  # private address
            {"url": "https://127.0.0.1/x", "eventType": "cash_out"},  # loopback
            {"url": "https://169.254.169.254/latest", "eventType": "cash_out"},  # link-local
            {"url": "https://hooks.example.com/x", "eventType": "payment_done"},  # event type
            {
                "url": "https://hooks.example.com/x",
                "eventType": "cash_out",
                "headers": [{"key": f"X-{i}", "value": "v"} for i in range(6)],
            },  # > 5 headers
            {
                "url": "https://hooks.example.com/x",
                "eventType": "cash_out",
                "headers": [{"key": "Host", "value": "evil"}],
            },  # blocked header
            {"url": "https://hooks.example.com/x", "eventType": "med_created", "version": "v2"},
            {"url": "https://hooks.example.com/x"},  # eventType missing
            {"url": "not a url", "eventType": "cash_out"},
        ]
        for body in cases:
            response = await client.post("/api/webhooks", json=body, headers=auth)
            assert_general_error(response, 400)
        assert await _count(api_on, "webhook_endpoints") == 0

    async def test_control_characters_and_bad_header_names_are_refused(
        self, api_on: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Every class of character that breaks a request or hides in it, in the URL, a header
        name or a header value: 400 WEBHOOK_INVALID_CONFIGURATION, nothing stored. A resend's
        temporary URL meets the same rule."""
        account = await make_account(api_on)
        auth = await bearer(client, account)
        header = {"key": "X-Token", "value": "t0k3n"}
        bodies = {
            **{f"url {name}": {"url": url} for name, url in refused.URLS.items()},
            **{
                f"name {name}": {"url": refused.VALID_URL, "headers": [{**header, "key": key}]}
                for name, key in refused.HEADER_NAMES.items()
            },
            **{
                f"value {name}": {"url": refused.VALID_URL, "headers": [{**header, "value": v}]}
                for name, v in refused.HEADER_VALUES.items()
            },
            "name ending in a newline": {
                "url": refused.VALID_URL,
                "headers": [{**header, "key": "X-Token\n"}],
            },
        }
        for case, body in bodies.items():
            response = await client.post(
                "/api/webhooks", json={"eventType": "cash_out", **body}, headers=auth
            )
            assert_general_error(response, 400)
            assert "t0k3n" not in response.text, case
        assert await _count(api_on, "webhook_endpoints") == 0
        for url in refused.URLS.values():
            response = await client.post("/api/resend-webhook/1", json={"url": url}, headers=auth)
            assert_general_error(response, 400)  # a NUL meets the body's screen first
        assert await _count(api_on, "webhook_attempts") == 0

    async def test_a_fourth_active_url_is_refused(
        self, api_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        account = await make_account(api_on)
        auth = await bearer(client, account)
        for n in range(3):
            body = {"url": receiver.url(f"/{n}"), "eventType": "refund_in"}
            assert (await client.post("/api/webhooks", json=body, headers=auth)).json()["success"]
        fourth = {"url": receiver.url("/3"), "eventType": "refund_in"}
        response = await client.post("/api/webhooks", json=fourth, headers=auth)
        assert response.status_code == 400 and "3 active" in response.json()["message"]
        other_type = {"url": receiver.url("/3"), "eventType": "refund_out"}
        assert (await client.post("/api/webhooks", json=other_type, headers=auth)).json()["success"]
        assert await _count(api_on, "webhook_endpoints") == 4

    async def test_account_gone_is_404(
        self, api_on: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        account = await make_account(api_on)
        auth = await bearer(client, account)
        async with api_on.db.connection() as conn:
            await conn.execute("DELETE FROM credentials WHERE account_id = $1", account.account_id)
            await conn.execute("DELETE FROM certificates WHERE account_id = $1", account.account_id)
            await conn.execute(
                "DELETE FROM ledger_postings WHERE account_id = $1", account.account_id
            )
            await conn.execute("DELETE FROM account_keys WHERE account_id = $1", account.account_id)
            await conn.execute("DELETE FROM accounts WHERE id = $1", account.account_id)
        body = {"url": receiver.url(), "eventType": "cash_out"}
        assert (await client.post("/api/webhooks", json=body, headers=auth)).status_code == 404
        assert (await client.get("/api/webhooks", headers=auth)).status_code == 404


class TestResend:
    async def test_resend_to_configured_urls_by_every_identifier(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        from pixgate.webhooks import service as webhooks

        account = await make_account(insecure)
        auth = await bearer(client, account)
        await webhooks.add(
            insecure, account.account_id, event_type="cash_out", url=receiver.url("/first")
        )
        await webhooks.add(
            insecure, account.account_id, event_type="cash_out", url=receiver.url("/second")
        )
        receiver.plan("/first", 202)
        receiver.plan("/second", 500)
        tx, event_id = await _event(insecure, account.account_id)
        async with insecure.db.connection() as conn:
            row = await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", tx)

        response = await client.post(f"/api/resend-webhook/{tx}", headers=auth)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["statusCode"] == 202 and body["sentAt"].endswith("Z")
        assert isinstance(body["webhookLogId"], int) and body["message"]
        assert sorted(r.path for r in receiver.received) == ["/first", "/second"]
        assert await _count(insecure, "webhook_attempts") == 2

        for identifier in (
            str(row["transaction_id"]),
            row["external_id"],
            row["end_to_end_id"],
            f"evt_{event_id}",
        ):
            again = await client.post(f"/api/resend-webhook/{identifier}", headers=auth)
            assert again.status_code == 200 and again.json()["statusCode"] == 200, identifier
        ids = {r.headers["webhook-id"] for r in receiver.at("/first")}
        assert len(ids) == 1  # a resend is the same message to that URL

        # The resend delivered the first URL's delivery; its scheduled job sends nothing more.
        sent = len(receiver.received)
        await drain(insecure)
        async with insecure.db.connection() as conn:
            states = await conn.fetch("SELECT url, status FROM webhook_deliveries ORDER BY id")
        assert [s["status"] for s in states] == ["delivered", "delivered"]
        assert len(receiver.received) == sent

    async def test_temporary_url_is_used_and_not_persisted(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        account = await make_account(insecure)
        auth = await bearer(client, account)
        tx, _ = await _event(insecure, account.account_id)
        receiver.plan("/tmp", 418)
        response = await client.post(
            f"/api/resend-webhook/{tx}", json={"url": receiver.url("/tmp")}, headers=auth
        )
        assert response.status_code == 200
        assert response.json()["statusCode"] == 418
        assert [r.path for r in receiver.received] == ["/tmp"]
        assert await _count(insecure, "webhook_endpoints") == 0
        async with insecure.db.connection() as conn:
            logged = await conn.fetchrow(
                "SELECT * FROM webhook_attempts WHERE id = $1", response.json()["webhookLogId"]
            )
        assert logged["status_code"] == 418 and logged["trigger"] == "resend"

    async def test_400_without_url_or_configuration(
        self, insecure: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(insecure)
        tx, _ = await _event(insecure, account.account_id)
        response = await client.post(
            f"/api/resend-webhook/{tx}", headers=await bearer(client, account)
        )
        assert_general_error(response, 400)
        assert await _count(insecure, "webhook_attempts") == 0

    async def test_unsafe_temporary_url_is_400(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        tx, _ = await _event(rt, account.account_id)
        auth = await bearer(client, account)
        for url in ("http://hooks.example.com/", "https://192.168.0.10/", "https://[::1]/"):
            response = await client.post(
                f"/api/resend-webhook/{tx}", json={"url": url}, headers=auth
            )
            assert response.status_code == 400, url
        assert await _count(rt, "webhook_deliveries") == 0

    async def test_another_accounts_transaction_is_404(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        owner = await make_account(insecure, name="Owner")
        intruder = await make_account(insecure, name="Intruder")
        tx, event_id = await _event(insecure, owner.account_id)
        async with insecure.db.connection() as conn:
            row = await conn.fetchrow("SELECT * FROM transactions WHERE id = $1", tx)
        auth = await bearer(client, intruder)
        for identifier in (
            str(tx),
            str(row["transaction_id"]),
            row["external_id"],
            row["end_to_end_id"],
            f"evt_{event_id}",
            "nothing-like-this",
        ):
            response = await client.post(
                f"/api/resend-webhook/{identifier}", json={"url": receiver.url()}, headers=auth
            )
            assert response.status_code == 404, identifier
            assert response.json()["message"].endswith(f"{identifier} not found")
        assert receiver.received == []

    async def test_429_after_60_requests_a_minute(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        auth = await bearer(client, account)
        responses = [
            await client.post("/api/resend-webhook/missing", headers=auth) for _ in range(61)
        ]
        assert [r.status_code for r in responses[:60]] == [404] * 60
        assert responses[60].status_code == 429
        assert 1 <= int(responses[60].headers["retry-after"]) <= 60
        other = await make_account(rt, name="Other")
        other_status = await client.post(
            "/api/resend-webhook/missing", headers=await bearer(client, other)
        )
        assert other_status.status_code == 404  # limits are per account


class TestEvents:
    async def test_list_filters_and_paginates(
        self, insecure: Runtime, client: httpx.AsyncClient, receiver: Receiver
    ) -> None:
        from pixgate.webhooks import service as webhooks

        account = await make_account(insecure)
        auth = await bearer(client, account)
        _, unrouted = await _event(insecure, account.account_id)  # no endpoint yet: none
        await webhooks.add(insecure, account.account_id, event_type="cash_out", url=receiver.url())
        receiver.plan("/hook", 200, 500)
        for _ in range(2):
            await _event(insecure, account.account_id)
        await drain(insecure)

        page = (await client.get("/api/events", params={"size": 2}, headers=auth)).json()
        assert page["metadata"] == {
            "page": 1,
            "size": 2,
            "total": 3,
            "totalPages": 2,
            "hasNext": True,
            "hasPrevious": False,
        }
        states = {
            e["id"]: e["deliveryState"]
            for e in (await client.get("/api/events", headers=auth)).json()["data"]
        }
        assert states[f"evt_{unrouted}"] == "none"
        assert sorted(states.values()) == ["delivered", "none", "pending"]
        pending = (
            await client.get("/api/events", params={"deliveryState": "pending"}, headers=auth)
        ).json()
        assert [e["deliveryState"] for e in pending["data"]] == ["pending"]
        item = pending["data"][0]
        assert set(item) == {"id", "type", "transactionId", "createdAt", "deliveryState"}
        none = (await client.get("/api/events", params={"type": "cash_in"}, headers=auth)).json()
        assert none["metadata"]["total"] == 0 and none["data"] == []
        future = (
            await client.get(
                "/api/events", params={"startDate": "2999-01-01T00:00:00Z"}, headers=auth
            )
        ).json()
        assert future["data"] == []

        redelivered = await client.post(f"/api/resend-webhook/{item['id']}", headers=auth)
        assert redelivered.json()["statusCode"] == 200
        after = (
            await client.get("/api/events", params={"deliveryState": "pending"}, headers=auth)
        ).json()
        assert after["data"] == []

    async def test_bad_parameters_are_400_and_other_accounts_invisible(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        owner = await make_account(rt, name="Owner")
        await _event(rt, owner.account_id)
        other = await make_account(rt, name="Other")
        auth = await bearer(client, other)
        assert (await client.get("/api/events", headers=auth)).json()["data"] == []
        for params in (
            {"size": 0},
            {"size": 101},
            {"page": 0},
            {"type": "nope"},
            {"deliveryState": "lost"},
            {"startDate": "yesterday"},
        ):
            assert (await client.get("/api/events", params=params, headers=auth)).status_code == 400


async def test_openapi_documents_every_payload(rt: Runtime, client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    names = set(document["webhooks"])
    assert {
        "cash_out (v1)",
        "cash_in (v1)",
        "med_created (v1)",
        "TRANSFER (v2)",
        "RECEIVE (v2)",
        "REFUND (v2)",
    } <= names
    transfer = document["webhooks"]["TRANSFER (v2)"]["post"]["requestBody"]["content"]
    examples = transfer["application/json"]["examples"]
    assert examples["liquidated"]["value"]["type"] == "TRANSFER"


async def test_a_real_server_refuses_header_injection_and_masks_values(
    rt: Runtime, database_url: str
) -> None:
    """The issue's own request, against a real `pixgate serve`: the URL that smuggled a header
    is refused, so is a value that would, and the list shows a stored value masked."""
    account = await make_account(rt)
    settings = {"webhook_api_enabled": "true", "allow_insecure_webhooks": "true"}
    with serving(database_url, **settings) as base:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            auth = await bearer(http, account)
            hostile = [
                {"url": "https://host/h\r\nX-Evil: 1"},
                {
                    "url": "http://127.0.0.1:9/hook",
                    "headers": [{"key": "X-Token", "value": "t0k3n\r\nX-Evil: 1"}],
                },
            ]
            for body in hostile:
                response = await http.post(
                    "/api/webhooks", json={"eventType": "cash_out", **body}, headers=auth
                )
                assert_general_error(response, 400, "WEBHOOK_INVALID_CONFIGURATION")
            assert await _count(rt, "webhook_endpoints") == 0
            valid = {
                "eventType": "cash_out",
                "url": "http://127.0.0.1:9/hook",
                "headers": [{"key": "X-Token", "value": "t0k3n"}],
            }
            assert (await http.post("/api/webhooks", json=valid, headers=auth)).json()["success"]
            listed = await http.get("/api/webhooks", headers=auth)
            assert listed.json()["webhooks"][0]["headers"] == {"X-Token": "******"}
            assert "t0k3n" not in listed.text
