"""Secrets never reach a log line or an error body (security item 9), checked as a user runs it.

A real `pixgate serve`, with its in-process worker (settlement and webhook delivery run and
log), at DEBUG and in JSON, gets a request on every route of the API with real secrets in
play: client secrets (JSON body, OAuth form, HTTP Basic, wrong ones), access tokens (good,
forged, expired, bound to another certificate, in a query parameter), certificates
(malformed, unregistered, expired), a webhook whose custom header carries the receiver's
credential and whose deliveries are signed with `whsec_` secrets, bodies that fail
validation with a secret inside. Operators get their secrets from the CLI, as the README
says. Then the captured output (and the CLI's stderr) and every error answer are searched
for each secret value, whole and in pieces (a PEM's base64 lines, a token's signature).

A guard makes a new route join: every (method, path template) of `ROUTERS` must have been
called at least once.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx

from pixgate.accounts.rules.certificates import from_pem
from pixgate.accounts.rules.tokens import TokenSigner
from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from pixgate.webhooks import verify_signature
from tests.processes import free_port
from tests.secret_hunt import (
    CPF,
    CRASHING_SERVE,
    EMAIL_KEY,
    EVP,
    TXID,
    Cli,
    Recorder,
    Secrets,
    alg_none,
    api_routes,
    basic,
    environment,
    logged,
    read_log,
    self_signed,
    serving_with_worker,
)
from tests.webhooks.receiver import Receiver


async def test_no_secret_in_logs_or_error_bodies(
    rt: Runtime, database_url: str, tmp_path: Path, receiver: Receiver
) -> None:
    env = environment(database_url)
    cli = Cli(env)
    secrets = Secrets()
    receiver.plan("/hook-fail", *([500] * 50))
    closed_port = free_port()  # nothing listens there: deliveries fail to connect
    receiver_credential = f"receiver-secret-{uuid.uuid4().hex}"
    receiver_header = f"Bearer {receiver_credential}"
    secrets.add("custom webhook header value", receiver_header)
    secrets.add("custom webhook header credential", receiver_credential)

    # The operator's side: accounts, a second credential, a brought certificate, the
    # webhook secret (then rotated: both sign), a webhook with the receiver's credential.
    shop = cli("accounts", "create", "--name", "Loja Segura", "--balance", "1000.00", "--json")
    payer = cli("accounts", "create", "--name", "Pagador", "--balance", "500.00", "--json")
    for label, account in (("shop", shop), ("payer", payer)):
        secrets.add(f"{label} clientSecret", account["clientSecret"])
        secrets.pem(f"{label} private key", account["privateKeyPem"])
        secrets.certificate(f"{label} certificate", account["certificatePem"])
    extra = cli("credentials", "create", "--account", str(shop["accountId"]), "--json")
    secrets.add("second clientSecret", extra["clientSecret"])
    brought_pem, brought_key = self_signed(
        datetime.now(UTC) - timedelta(minutes=5), datetime.now(UTC) + timedelta(days=30)
    )
    (tmp_path / "brought.pem").write_text(brought_pem)
    cli(
        "certs",
        "register",
        "--account",
        str(shop["accountId"]),
        "--pem",
        str(tmp_path / "brought.pem"),
        "--json",
    )
    secrets.certificate("registered certificate", brought_pem)
    secrets.pem("registered certificate's private key", brought_key)
    first_whsec = cli("webhooks", "secret", "--account", str(shop["accountId"]), "--json")
    cli(
        "webhooks",
        "add",
        "--account",
        str(shop["accountId"]),
        "--event",
        "cash_out",
        "--url",
        receiver.url("/hook-out"),
        "--header",
        f"Authorization={receiver_header}",
        "--json",
    )
    second_whsec = cli(
        "webhooks", "secret", "--account", str(shop["accountId"]), "--rotate", "--json"
    )
    whsecs = [first_whsec["secret"], second_whsec["secret"]]
    for number, whsec in enumerate(whsecs, 1):
        secrets.add(f"webhook secret {number}", whsec)
        secrets.add(f"webhook secret {number}, key part", whsec.removeprefix("whsec_"))

    # The gateway's own keys, generated on first start and kept in the database.
    async with rt.db.connection() as conn:
        stored = {
            r["name"]: r["value"] for r in await conn.fetch("SELECT name, value FROM server_keys")
        }
    assert "jwt_ed25519" in stored and "secret_hash_key" in stored  # made by the CLI above
    for name, value in stored.items():
        if "BEGIN" in value:
            secrets.pem(f"server key {name}", value)
        else:
            secrets.add(f"server key {name}", value)

    shop_cert = quote(shop["certificatePem"], safe="")
    payer_cert = quote(payer["certificatePem"], safe="")
    brought_cert = quote(brought_pem, safe="")
    shop_json = {"clientId": shop["clientId"], "clientSecret": shop["clientSecret"]}
    secrets.add("shop Basic credentials", basic(shop["clientId"], shop["clientSecret"]))

    recorder = Recorder()
    log_path = tmp_path / "serve.log"
    with serving_with_worker(env, log_path) as base:
        async with recorder.client(base) as http:

            async def token(
                path: str, status: int, cert: str | None = None, **kwargs: Any
            ) -> str | None:
                headers = kwargs.pop("headers", {})
                if cert is not None:
                    headers["X-SSL-Client-Cert"] = cert
                response = await http.post(path, headers=headers, **kwargs)
                assert response.status_code == status, response.text
                if status not in (200, 201):  # a form request is answered as RFC 6749's 200
                    return None
                issued: str = response.json()["access_token"]
                secrets.token(f"access token from {path.split('?')[0]}", issued)
                return issued

            # --- tokens: every way in, and every way to fail
            shop_token = await token("/api/auth/token", 201, shop_cert, json=shop_json)
            assert shop_token is not None
            form = {"grant_type": "client_credentials"}
            await token(
                "/oauth/token",
                200,
                shop_cert,
                data=form,
                headers={"Authorization": basic(shop["clientId"], shop["clientSecret"])},
            )
            await token(
                "/oauth/token",
                200,
                shop_cert,
                data={
                    **form,
                    "client_id": extra["clientId"],
                    "client_secret": extra["clientSecret"],
                },
            )
            brought_token = await token("/api/auth/token", 201, brought_cert, json=shop_json)
            payer_token = await token(
                "/api/auth/token",
                201,
                payer_cert,
                json={"clientId": payer["clientId"], "clientSecret": payer["clientSecret"]},
            )
            assert brought_token is not None and payer_token is not None
            wrong = shop["clientSecret"][::-1]
            await token(
                "/api/auth/token", 401, shop_cert, json={**shop_json, "clientSecret": wrong}
            )
            await token(
                "/oauth/token",
                401,
                shop_cert,
                data=form,
                headers={"Authorization": basic(shop["clientId"], wrong)},
            )
            await token(
                "/oauth/token",
                401,
                shop_cert,
                data=form,
                headers={"Authorization": "Basic !" + shop["clientSecret"]},
            )
            await token(
                "/oauth/token",
                400,
                shop_cert,
                data={
                    "grant_type": "password",
                    "client_id": shop["clientId"],
                    "client_secret": shop["clientSecret"],
                    "password": shop["clientSecret"],
                },
            )
            await token(
                "/api/auth/token", 401, shop_cert, json={**shop_json, "clientId": str(uuid.uuid4())}
            )
            await token("/api/auth/token", 403, payer_cert, json=shop_json)
            await token("/api/auth/token", 400, None, json=shop_json)
            # bodies that fail validation with the secret inside
            await token(
                "/api/auth/token",
                400,
                shop_cert,
                json={**shop_json, "clientSecret": shop["clientSecret"] + "x" * 30},
            )
            await token(
                "/api/auth/token", 400, shop_cert, json={**shop_json, "clientId": "not-a-uuid"}
            )
            await token("/api/auth/token", 400, shop_cert, json={**shop_json, "clientId": 7})
            await token(
                "/api/auth/token",
                400,
                shop_cert,
                headers={"Content-Type": "application/json"},
                content=json.dumps(shop_json)[:-1].encode(),
            )
            # and in a query string, where some clients put them
            await token(
                f"/oauth/token?client_secret={shop['clientSecret']}",
                200,
                shop_cert,
                data={**form, "client_id": shop["clientId"], "client_secret": shop["clientSecret"]},
            )
            # certificates: malformed, cut, a private key by mistake, form-encoded,
            # unregistered, expired, not yet valid
            await token("/api/auth/token", 400, "not-a-certificate", json=shop_json)
            await token("/api/auth/token", 400, shop_cert[: len(shop_cert) // 2], json=shop_json)
            await token(
                "/api/auth/token", 400, quote(shop["privateKeyPem"], safe=""), json=shop_json
            )
            await token("/api/auth/token", 400, quote_plus(shop["certificatePem"]), json=shop_json)
            now = datetime.now(UTC)
            for label, (not_before, not_after), status in (
                ("unregistered", (now - timedelta(minutes=5), now + timedelta(days=1)), 401),
                ("expired", (now - timedelta(days=30), now - timedelta(days=1)), 401),
                ("not yet valid", (now + timedelta(days=1), now + timedelta(days=30)), 401),
            ):
                pem, key = self_signed(not_before, not_after)
                secrets.certificate(f"{label} certificate", pem)
                secrets.pem(f"{label} certificate's private key", key)
                await token("/api/auth/token", status, quote(pem, safe=""), json=shop_json)

            shop_headers = {"Authorization": f"Bearer {shop_token}", "X-SSL-Client-Cert": shop_cert}
            payer_headers = {
                "Authorization": f"Bearer {payer_token}",
                "X-SSL-Client-Cert": payer_cert,
            }

            # --- forged, expired, misbound and misplaced tokens
            signer = TokenSigner.from_pem(
                stored["jwt_ed25519"], issuer="pixgate", audience="pixgate-api"
            )
            expired = signer.issue(
                client_id=shop["clientId"],
                account_id=shop["accountId"],
                thumbprint=from_pem(shop["certificatePem"]).thumbprint,
                now=datetime.now(UTC) - timedelta(hours=2),
                ttl=60,
            )
            secrets.token("expired token", expired)
            forged = shop_token[:-6] + ("AAAAAA" if not shop_token.endswith("AAAAAA") else "BBBBBB")
            secrets.add("forged token", forged)
            secrets.add("alg none token", alg_none(shop_token))
            for headers in (
                {"Authorization": f"Bearer {forged}", "X-SSL-Client-Cert": shop_cert},
                {"Authorization": f"Bearer {alg_none(shop_token)}", "X-SSL-Client-Cert": shop_cert},
                {"Authorization": f"Bearer {expired}", "X-SSL-Client-Cert": shop_cert},
                {"Authorization": f"Bearer {shop_token}", "X-SSL-Client-Cert": payer_cert},
                {"Authorization": f"Bearer {shop_token}"},
                {"Authorization": f"Bearer {shop_token}", "X-SSL-Client-Cert": "garbage"},
                {"Authorization": f"Token {shop_token}", "X-SSL-Client-Cert": shop_cert},
                {
                    "Authorization": basic(shop["clientId"], shop["clientSecret"]),
                    "X-SSL-Client-Cert": shop_cert,
                },
            ):
                response = await http.get("/accounts/balances", headers=headers)
                assert response.status_code == 401, response.text
            response = await http.get(
                "/api/balance",
                params={"access_token": shop_token},
                headers={"X-SSL-Client-Cert": shop_cert},
            )
            assert response.status_code == 401

            # --- webhooks: one by the API (custom header with the credential), one that
            # fails, one nobody answers; a bad one with the credential inside
            for event, url, version in (
                ("cash_in", receiver.url("/hook-in"), "v2"),
                ("cash_out", receiver.url("/hook-fail"), "v1"),
                ("cash_in", f"http://127.0.0.1:{closed_port}/hook", "v1"),
            ):
                response = await http.post(
                    "/api/webhooks",
                    headers=shop_headers,
                    json={
                        "url": url,
                        "eventType": event,
                        "version": version,
                        "headers": [
                            {"key": "Authorization", "value": receiver_header},
                            {"key": "X-Receiver-Token", "value": receiver_credential},
                        ],
                    },
                )
                assert response.status_code == 200 and response.json()["success"], response.text
            for bad in (
                {"key": "Authorization", "value": receiver_header + "x" * 1100},
                {"key": "Authorization", "value": receiver_header + "\r\nX-Injected: 1"},
                {"key": f"Authorization: {receiver_header}", "value": ""},  # a pasted line
            ):
                response = await http.post(
                    "/api/webhooks",
                    headers=shop_headers,
                    json={
                        "url": receiver.url("/hook-in"),
                        "eventType": "cash_in",
                        "headers": [bad],
                    },
                )
                assert response.status_code == 400, response.text
            response = await http.post(
                "/api/webhooks",
                headers=shop_headers,
                json={
                    "url": f"http://user:{shop['clientSecret']}@127.0.0.1:{receiver.port}/hook",
                    "eventType": "cash_in",
                },
            )
            assert response.status_code == 400, response.text
            response = await http.get("/api/webhooks", headers=shop_headers)
            assert response.status_code == 200 and response.json()["total"] == 4

            # --- money moves, so settlement and deliveries run in the worker
            response = await http.post(
                "/sandbox/dict/keys",
                headers=shop_headers,
                json={
                    "key": EMAIL_KEY,
                    "keyType": "EMAIL",
                    "name": "Maria Silva",
                    "document": CPF,
                    "ispb": "60701190",
                    "bankName": "Banco Destino",
                    "branch": "0001",
                    "accountNumber": "123456-7",
                },
            )
            assert response.status_code == 201, response.text
            response = await http.post(
                "/api/pix/cash-out",
                headers=shop_headers,
                json={
                    "value": 10,
                    "externalId": "logs-out-1",
                    "description": "pagamento",
                    "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
                },
            )
            assert response.status_code == 201, response.text
            cash_out_id = response.json()["transactionId"]
            response = await http.post(
                "/api/pix/cash-out",
                headers=shop_headers,
                json={
                    "value": 10,
                    "externalId": "logs-out-2",
                    "description": "x" * 500,
                    "clientSecret": shop["clientSecret"],
                    "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
                },
            )
            assert response.status_code == 400, response.text
            code = brcode.encode(
                brcode.static("fulano@example.com", "Fulano de Tal", "Recife", 1050, "PED1")
            )
            response = await http.post(
                "/api/pix/cash-out-qrcode",
                headers=shop_headers,
                json={"qrCode": code, "value": "10.50", "externalId": "logs-qr-1"},
            )
            assert response.status_code == 201, response.text
            response = await http.post(
                "/dict/pix",
                json={"pixKey": EMAIL_KEY, "payment": {"currency": "BRL", "amount": 100}},
                headers={**shop_headers, "x-idempotency-key": str(uuid.uuid4())},
            )
            assert response.status_code == 201, response.text
            response = await http.post(
                "/api/pix/cash-in",
                headers=shop_headers,
                json={
                    "transaction": {
                        "value": "12.34",
                        "description": "Pedido 42",
                        "externalId": "logs-in-1",
                    },
                    "payer": {"fullName": "Maria da Silva", "document": CPF},
                },
            )
            assert response.status_code == 201, response.text
            pix_code = response.json()["pixCode"]
            response = await http.post(
                "/sandbox/pix/pay",
                headers=payer_headers,
                json={"pixCode": pix_code, "payer": {"name": "Pagador", "document": CPF}},
            )
            assert response.status_code == 201, response.text
            response = await http.post(
                "/sandbox/pix/incoming",
                headers=shop_headers,
                json={"value": "5.00", "payer": {"name": "Pagador", "document": CPF}},
            )
            assert response.status_code == 201, response.text

            # --- refunds, of that PIX through both families, and one received
            received = response.json()
            response = await http.post(
                f"/api/pix/refund-in/{received['transactionId']}",
                headers=shop_headers,
                json={"refundValue": "1.00", "reason": "Devolucao", "externalId": "logsrefund1"},
            )
            assert response.status_code == 201, response.text
            devolucao = f"/pix/{received['endToEndId']}/devolucao"
            response = await http.put(
                f"{devolucao}/logsdev1", headers=shop_headers, json={"valor": "1.00"}
            )
            assert response.status_code == 201, response.text
            response = await http.get(f"{devolucao}/logsrefund1", headers=shop_headers)
            assert response.status_code == 200, response.text
            response = await http.post(
                f"/sandbox/pix/{uuid.uuid4()}/refund-out", headers=shop_headers, json={"value": 1}
            )
            assert response.status_code == 404, response.text

            # --- a MED case against that PIX: opened, listed, analysed
            response = await http.post(
                "/sandbox/med",
                headers=shop_headers,
                json={"endToEndId": received["endToEndId"], "description": "Disputa"},
            )
            assert response.status_code == 201, response.text
            case = response.json()["id"]
            response = await http.get("/api/med", headers=shop_headers)
            assert response.status_code == 200 and response.json()["data"], response.text
            response = await http.post(
                f"/sandbox/med/{case}/analysis", headers=shop_headers, json={"result": "REJECTED"}
            )
            assert response.status_code == 200, response.text

            # --- cob and its location
            response = await http.put(
                f"/cob/{TXID}",
                headers=shop_headers,
                json={
                    "calendario": {"expiracao": 3600},
                    "valor": {"original": "7.00"},
                    "chave": "loja@example.com",
                    "solicitacaoPagador": "Pedido 43",
                },
            )
            assert response.status_code == 201, response.text
            location = brcode.decode(response.json()["location"]).location_url
            assert location is not None
            assert (await http.get(f"/cob/{TXID}", headers=shop_headers)).status_code == 200
            response = await http.patch(
                f"/cob/{TXID}",
                headers=shop_headers,
                json={"solicitacaoPagador": "Pedido 43, revisto"},
            )
            assert response.status_code == 200, response.text
            response = await http.patch(
                f"/cob/{TXID}", headers=shop_headers, json={"solicitacaoPagador": shop_token}
            )
            assert response.status_code == 400, response.text
            response = await http.get(f"/qr/v2/{location.rsplit('/', 1)[-1]}")
            assert response.status_code == 200, response.text
            assert (await http.get("/qr/v2/nothing-here")).status_code == 404
            assert (await http.get("/loc/nothing-here")).status_code == 404
            assert (await http.get("/.well-known/pix-jwks.json")).status_code == 200

            # --- reads
            for path in (
                "/accounts/balances",
                "/api/balance",
                "/api/transactions",
                f"/api/pix/transactions/pix-key/{EVP}",
                "/api/events",
            ):
                response = await http.get(path, headers=shop_headers)
                assert response.status_code == 200, (path, response.text)
            response = await http.get(
                "/api/transactions",
                headers=shop_headers,
                params={"page": shop_token, "access_token": shop_token},
            )
            assert response.status_code == 400, response.text
            for path in ("/healthz", "/readyz", "/metrics", "/.well-known/jwks.json", "/docs"):
                assert (await http.get(path)).status_code == 200, path
            assert (await http.get(f"/no/such/route?token={shop_token}")).status_code == 404

            # --- deliveries arrive, carrying the credential, signed with the whsec_ secrets
            await receiver.wait_for(2)
            async with asyncio.timeout(30):
                while not (  # noqa: ASYNC110 - the receiver's state, polled
                    receiver.at("/hook-out")
                    and receiver.at("/hook-in")
                    and receiver.at("/hook-fail")
                ):
                    await asyncio.sleep(0.05)
            for delivered in receiver.at("/hook-out") + receiver.at("/hook-in"):
                assert delivered.headers["authorization"] == receiver_header
                assert verify_signature(whsecs[0], delivered.headers, delivered.body)
                assert verify_signature(whsecs[1], delivered.headers, delivered.body)
            assert receiver.at("/hook-in")[0].headers["x-receiver-token"] == receiver_credential

            # --- resend, to the configured URLs and to a given one
            resent = await http.post(f"/api/resend-webhook/{cash_out_id}", headers=shop_headers)
            assert resent.status_code == 200, resent.text
            resent = await http.post(
                f"/api/resend-webhook/{cash_out_id}",
                headers=shop_headers,
                json={"url": receiver.url("/hook-resend")},
            )
            assert resent.status_code == 200 and resent.json()["statusCode"] == 200, resent.text
            assert len(receiver.at("/hook-resend")) == 1

            # --- the dashboard: the secret typed in the sign-in form, a credential in a header
            # field, the session cookie; every page and form
            def csrf(page: httpx.Response) -> str:
                found = re.search(r'name="csrf" value="([^"]+)"', page.text)
                assert found is not None, page.text
                return found[1]

            login = await http.get("/dashboard/login")
            signing_in = {"clientId": shop["clientId"], "clientSecret": shop["clientSecret"]}
            response = await http.post(
                "/dashboard/login",
                data={
                    **signing_in,
                    "clientSecret": shop["clientSecret"] + "x",
                    "csrf": csrf(login),
                },
            )
            assert response.status_code == 401, response.text
            response = await http.post(
                "/dashboard/login", data={**signing_in, "csrf": csrf(response)}
            )
            assert response.status_code == 303, response.text
            secrets.add("dashboard session cookie", http.cookies["pixgate_session"])
            token_of_page = csrf(await http.get("/dashboard"))
            for path in (
                "/dashboard/transactions",
                "/dashboard/deliveries",
                "/dashboard/charges",
                f"/dashboard/nowhere?token={shop_token}",
            ):
                assert (await http.get(path)).status_code in (200, 404), path
            for name, value, status in (
                ("Authorization", receiver_header, 303),
                (f"Authorization: {receiver_header}", "", 400),  # a pasted line: not echoed
            ):
                response = await http.post(
                    "/dashboard/webhooks",
                    data={
                        "csrf": token_of_page,
                        "eventType": "refund_in",
                        "url": receiver.url("/hook-dashboard"),
                        "headerName": name,
                        "headerValue": value,
                    },
                )
                assert response.status_code == status, response.text
            listed = (await http.get("/api/webhooks", headers=shop_headers)).json()["webhooks"]
            added = next(w["id"] for w in listed if w["url"].endswith("/hook-dashboard"))
            assert (await http.get(f"/dashboard/webhooks?edit={added}")).status_code == 200
            response = await http.post(  # the receiver's credential goes, never shown back
                f"/dashboard/webhooks/{added}/test", data={"csrf": token_of_page}
            )
            assert response.status_code == 200, response.text
            response = await http.post(
                f"/dashboard/webhooks/{added}/deactivate", data={"csrf": token_of_page}
            )
            assert response.status_code == 303, response.text
            response = await http.post("/dashboard/webhooks/secret", data={"csrf": token_of_page})
            assert response.status_code == 409, response.text  # shown by the CLI already
            response = await http.post(
                "/dashboard/webhooks/secret/rotate", data={"csrf": token_of_page}
            )
            rotated = re.search(r'id="signing-secret" readonly value="([^"]+)"', response.text)
            assert response.status_code == 200 and rotated is not None, response.text
            secrets.add("webhook secret rotated in the dashboard", rotated[1])
            response = await http.post(
                "/dashboard/charges",
                data={
                    "csrf": token_of_page,
                    "value": "3.00",
                    "description": "Pedido painel",
                    "payerName": "Maria da Silva",
                    "payerDocument": CPF,
                },
            )
            assert response.status_code == 303, response.text
            charge_page = response.headers["location"]
            assert (await http.get(charge_page)).status_code == 200
            assert (await http.get(f"{charge_page}/qr.png")).status_code == 200
            assert (await http.get(f"{charge_page}/status")).status_code == 200
            assert (await http.get("/dashboard/charges/new")).status_code == 200
            response = await http.post(
                f"{charge_page}/simulate-payment", data={"csrf": token_of_page}
            )
            assert response.status_code == 303, response.text
            transaction_page = charge_page.replace("/charges/", "/transactions/")
            assert (await http.get(transaction_page)).status_code == 200
            listed_events = (await http.get("/api/events", headers=shop_headers)).json()["data"]
            # one with a URL of its type: a resend has somewhere to go
            event = next(e["id"] for e in listed_events if e["type"] in ("cash_in", "cash_out"))
            response = await http.post(
                f"/dashboard/events/{event.removeprefix('evt_')}/resend",
                data={"csrf": token_of_page},
            )
            assert response.status_code == 200, response.text  # each URL's answer listed
            delivery = re.search(r'href="(/dashboard/deliveries/\d+)"', response.text)
            assert delivery is not None, response.text
            assert (await http.get(delivery[1])).status_code == 200  # its payload and answers
            response = await http.post(f"{delivery[1]}/resend", data={"csrf": token_of_page})
            assert response.status_code == 200, response.text
            response = await http.post("/dashboard/logout", data={"csrf": token_of_page})
            assert response.status_code == 303, response.text

            # a revoked credential: new tokens refused at once, with its secret
            cli("credentials", "revoke", extra["clientId"])
            await token(
                "/oauth/token",
                401,
                shop_cert,
                data={
                    **form,
                    "client_id": extra["clientId"],
                    "client_secret": extra["clientSecret"],
                },
            )

            # the failed attempts (a 500, a refused connection) are logged at INFO
            await logged(log_path, "webhook.attempted", "info", 2)

    # --- every route was called
    missing = api_routes() - recorder.called
    assert not missing, f"routes this test never called (add them): {sorted(missing)}"

    # --- the log and the error bodies: no secret in either
    log = read_log(log_path)
    events = {e.get("event") for e in log.entries}
    assert {"http.request", "webhook.attempted", "worker.started", "worker.stopped"} <= events
    leaks = secrets.leaks([*log.lines, *cli.stderr])
    assert not leaks, f"secrets in the log:\n{leaks}"
    assert len(recorder.errors) > 30
    leaks = secrets.leaks(recorder.errors)
    assert not leaks, f"secrets in error bodies:\n{leaks}"

    print(
        f"\nrequests={recorder.requests} routes={len(recorder.called)}/{len(api_routes())} "
        f"statuses={dict(sorted(recorder.statuses.items()))} log_lines={len(log.lines)} "
        f"levels={log.levels} secret_needles={len(secrets.needles)}"
    )


async def test_a_crash_is_logged_without_the_secrets_it_carries(
    rt: Runtime, database_url: str, tmp_path: Path
) -> None:
    """A 500 whose exception message holds secrets: the `request.crashed` line carries the
    traceback, cleaned; the client sees none of it."""
    env = environment(database_url)
    cli = Cli(env)
    shop = cli("accounts", "create", "--name", "Loja", "--balance", "1.00", "--json")
    whsec = cli("webhooks", "secret", "--account", str(shop["accountId"]), "--json")["secret"]
    cert = quote(shop["certificatePem"], safe="")
    receiver_credential = f"receiver-secret-{uuid.uuid4().hex}"
    env["CRASH_MESSAGE"] = (
        f"crash with client_secret={shop['clientSecret']}, X-SSL-Client-Cert {cert}, "
        f"Authorization: Bearer {receiver_credential}, key {shop['privateKeyPem']!r}, {whsec}"
    )
    secrets = Secrets()
    secrets.add("clientSecret", shop["clientSecret"])
    secrets.certificate("certificate", shop["certificatePem"])
    secrets.pem("private key", shop["privateKeyPem"])
    secrets.add("custom header credential", receiver_credential)
    secrets.add("webhook secret", whsec)

    recorder = Recorder()
    log_path = tmp_path / "serve.log"
    with serving_with_worker(env, log_path, CRASHING_SERVE) as base:
        async with recorder.client(base) as http:
            issued = await http.post(
                "/api/auth/token",
                headers={"X-SSL-Client-Cert": cert},
                json={"clientId": shop["clientId"], "clientSecret": shop["clientSecret"]},
            )
            assert issued.status_code == 201, issued.text
            secrets.token("access token", issued.json()["access_token"])
            headers = {
                "Authorization": f"Bearer {issued.json()['access_token']}",
                "X-SSL-Client-Cert": cert,
            }
            assert (await http.get("/api/balance", headers=headers)).status_code == 200
            crashed = await http.get(
                "/api/balance", headers={**headers, "X-Request-Id": "crash-on-purpose"}
            )
            assert crashed.status_code == 500
            assert crashed.json()["message"] == "Internal server error"

    log = read_log(log_path)
    traces = {e["event"]: e["exception"] for e in log.entries if "exception" in e}
    # uvicorn logs its "Exception in ASGI application" only for an exception that escapes the
    # application; whichever lines carry the traceback, each is cleaned
    assert "request.crashed" in traces, traces
    for trace in traces.values():
        assert "RuntimeError: crash with client_secret=[REDACTED], X-SSL-Client-Cert " in trace
    assert not secrets.leaks([*log.lines, *cli.stderr]), secrets.leaks(log.lines)
    assert not secrets.leaks(recorder.errors), secrets.leaks(recorder.errors)
