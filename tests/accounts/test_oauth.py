"""The token endpoint as OAuth 2.0 (RFC 6749 sections 4.4 and 5, RFC 8705 section 2.1), the
scopes a token is granted, and the scope checks of the spec's own routes."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import jwt
import pytest

from pixgate.accounts.rules.clients import AuthMethod
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.helpers import bearer, cert_header, make_account

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
EVERY_SCOPE = " ".join(sorted(Scope))
CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


async def form_token(
    client: httpx.AsyncClient,
    pem: str | None,
    fields: dict[str, str] | str,
    *,
    authorization: str | None = None,
    path: str = "/oauth/token",
) -> httpx.Response:
    headers = dict(FORM)
    if pem is not None:
        headers["X-SSL-Client-Cert"] = cert_header(pem)
    if authorization is not None:
        headers["Authorization"] = authorization
    content = fields if isinstance(fields, str) else httpx.QueryParams(fields).__str__()
    return await client.post(path, content=content, headers=headers)


def by_fields(account: accounts.NewAccount, **extra: str) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_id": account.client_id,
        "client_secret": account.client_secret,
        **extra,
    }


def assert_refused(response: httpx.Response, status: int, error: str) -> None:
    """RFC 6749 5.2: exactly `error` and `error_description`, never cached."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "error_description"}
    assert body["error"] == error
    assert body["error_description"]
    assert response.headers["cache-control"] == "no-store"


def scope_claim(response: httpx.Response) -> str:
    claims = jwt.decode(response.json()["access_token"], options={"verify_signature": False})
    return str(claims["scope"])


class TestFormIssue:
    @pytest.mark.parametrize("path", ["/oauth/token", "/api/auth/token"])
    async def test_form_fields_answer_200_in_oauths_shape(
        self, rt: Runtime, client: httpx.AsyncClient, path: str
    ) -> None:
        account = await make_account(rt)
        response = await form_token(client, account.certificate_pem, by_fields(account), path=path)
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"access_token", "token_type", "expires_in", "scope"}
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == 1800
        assert body["scope"] == EVERY_SCOPE
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["content-type"].startswith("application/json")
        assert scope_claim(response) == EVERY_SCOPE

    async def test_basic_authentication(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        response = await form_token(
            client,
            account.certificate_pem,
            {"grant_type": "client_credentials"},
            authorization=basic(account.client_id, account.client_secret),
        )
        assert response.status_code == 200, response.text
        assert response.json()["scope"] == EVERY_SCOPE

    async def test_the_token_works_on_the_spec_routes(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        token = await form_token(client, account.certificate_pem, by_fields(account))
        headers = {
            "Authorization": f"Bearer {token.json()['access_token']}",
            "X-SSL-Client-Cert": cert_header(account.certificate_pem),
        }
        assert (await client.get("/accounts/balances", headers=headers)).status_code == 200

    async def test_scope_granted_as_asked(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        response = await form_token(
            client, account.certificate_pem, by_fields(account, scope="pix.write cob.read")
        )
        assert response.status_code == 200, response.text
        assert response.json()["scope"] == "cob.read pix.write"
        assert scope_claim(response) == "cob.read pix.write"

    async def test_a_scope_sent_empty_counts_as_omitted(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """RFC 6749 3.2: a parameter sent without a value is treated as omitted."""
        account = await make_account(rt)
        response = await form_token(client, account.certificate_pem, by_fields(account, scope=""))
        assert response.status_code == 200, response.text
        assert response.json()["scope"] == EVERY_SCOPE


class TestFormRefusals:
    async def test_no_grant_type_is_invalid_request(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        fields = by_fields(account)
        del fields["grant_type"]
        assert_refused(
            await form_token(client, account.certificate_pem, fields), 400, "invalid_request"
        )

    async def test_another_grant_type_is_unsupported(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client, account.certificate_pem, by_fields(account, grant_type="password")
        )
        assert_refused(response, 400, "unsupported_grant_type")

    async def test_a_repeated_parameter_is_invalid_request(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        content = (
            f"grant_type=client_credentials&client_id={account.client_id}"
            f"&client_secret={account.client_secret}&scope=cob.read&scope=cob.write"
        )
        response = await form_token(client, account.certificate_pem, content)
        assert_refused(response, 400, "invalid_request")

    async def test_basic_and_a_secret_field_together_is_invalid_request(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client,
            account.certificate_pem,
            by_fields(account),
            authorization=basic(account.client_id, account.client_secret),
        )
        assert_refused(response, 400, "invalid_request")

    async def test_an_unknown_scope_is_invalid_scope(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client, account.certificate_pem, by_fields(account, scope="cob.write admin")
        )
        assert_refused(response, 400, "invalid_scope")
        assert "admin" in response.json()["error_description"]

    async def test_a_wrong_secret_in_fields_is_401_without_a_basic_challenge(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client, account.certificate_pem, by_fields(account, client_secret="x" * 43)
        )
        assert_refused(response, 401, "invalid_client")
        assert "www-authenticate" not in response.headers

    async def test_a_wrong_secret_by_basic_is_challenged_to_basic(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client,
            account.certificate_pem,
            {"grant_type": "client_credentials"},
            authorization=basic(account.client_id, "x" * 43),
        )
        assert_refused(response, 401, "invalid_client")
        assert response.headers["www-authenticate"].startswith("Basic ")

    @pytest.mark.parametrize("authorization", ["Basic !!!", "Basic " + "bm9jb2xvbg=="])
    async def test_malformed_basic_is_invalid_client(
        self, rt: Runtime, client: httpx.AsyncClient, authorization: str
    ) -> None:
        account = await make_account(rt)
        response = await form_token(
            client,
            account.certificate_pem,
            {"grant_type": "client_credentials"},
            authorization=authorization,
        )
        assert_refused(response, 401, "invalid_client")
        assert response.headers["www-authenticate"].startswith("Basic ")

    @pytest.mark.parametrize(
        "client_id", [None, "not-a-uuid", "00000000-0000-1000-8000-000000000000"]
    )
    async def test_no_or_a_foreign_client_id_is_invalid_client(
        self, rt: Runtime, client: httpx.AsyncClient, client_id: str | None
    ) -> None:
        account = await make_account(rt)
        fields = by_fields(account)
        if client_id is None:
            del fields["client_id"]
        else:
            fields["client_id"] = client_id
        response = await form_token(client, account.certificate_pem, fields)
        assert_refused(response, 401, "invalid_client")

    async def test_an_unknown_client_and_a_wrong_secret_answer_alike(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        unknown = await form_token(
            client,
            account.certificate_pem,
            by_fields(account, client_id="123e4567-e89b-42d3-a456-426614174000"),
        )
        wrong = await form_token(
            client, account.certificate_pem, by_fields(account, client_secret="y" * 43)
        )
        assert unknown.json() == wrong.json()

    async def test_certificate_failures(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        """Missing or unreadable: the request is malformed; unregistered or another account's:
        the client fails to authenticate (RFC 8705 section 2)."""
        account = await make_account(rt)
        other = await make_account(rt, name="Outra Loja")
        fields = by_fields(account)
        assert_refused(await form_token(client, None, fields), 400, "invalid_request")
        assert_refused(await form_token(client, "garbage", fields), 400, "invalid_request")
        response = await form_token(client, other.certificate_pem, fields)
        assert_refused(response, 401, "invalid_client")
        await accounts.revoke_certificate(rt, account.certificate_fingerprint)
        response = await form_token(client, account.certificate_pem, fields)
        assert_refused(response, 401, "invalid_client")

    async def test_the_rate_limit_keeps_its_429(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"token_rate_limit": "2/minute"})
        account = await make_account(rt)
        for _ in range(2):
            response = await form_token(client, account.certificate_pem, by_fields(account))
            assert response.status_code == 200, response.text
        response = await form_token(client, account.certificate_pem, by_fields(account))
        assert response.status_code == 429
        assert response.json()["code"] == "RATE_LIMITED"
        assert int(response.headers["retry-after"]) >= 1


class TestJsonUnchanged:
    @pytest.mark.parametrize("path", ["/oauth/token", "/api/auth/token"])
    async def test_json_answers_201_without_scope(
        self, rt: Runtime, client: httpx.AsyncClient, path: str
    ) -> None:
        account = await make_account(rt)
        response = await client.post(
            path,
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
            headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
        )
        assert response.status_code == 201
        assert set(response.json()) == {"access_token", "token_type", "expires_in"}
        assert scope_claim(response) == EVERY_SCOPE

    async def test_json_refusals_keep_the_envelope(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await client.post(
            "/oauth/token",
            json={"clientId": account.client_id, "clientSecret": "z" * 43},
            headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
        )
        assert response.status_code == 401
        assert response.json()["code"] == "PUB_INVALID_CREDENTIALS"


class TestTlsClientAuth:
    async def test_client_id_and_certificate_alone(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="50")
        tls = await accounts.create_credential(
            rt, account.account_id, method=AuthMethod.TLS_CLIENT_AUTH
        )
        assert tls.client_secret is None
        fields = {
            "grant_type": "client_credentials",
            "client_id": tls.client_id,
            "scope": "pix.read",
        }
        response = await form_token(client, account.certificate_pem, fields)
        assert response.status_code == 200, response.text
        assert response.json()["scope"] == "pix.read"
        claims = jwt.decode(response.json()["access_token"], options={"verify_signature": False})
        assert claims["sub"] == tls.client_id
        assert claims["acc"] == account.account_id
        headers = {
            "Authorization": f"Bearer {response.json()['access_token']}",
            "X-SSL-Client-Cert": cert_header(account.certificate_pem),
        }
        balances = await client.get("/accounts/balances", headers=headers)
        assert balances.status_code == 200, balances.text

    async def test_refusals(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        """A secret sent for it, Basic, another account's certificate, the JSON body (which
        needs a secret): each is an unknown client's answer."""
        account = await make_account(rt)
        other = await make_account(rt, name="Outra Loja")
        tls = await accounts.create_credential(
            rt, account.account_id, method=AuthMethod.TLS_CLIENT_AUTH
        )
        fields = {"grant_type": "client_credentials", "client_id": tls.client_id}
        with_secret = {**fields, "client_secret": account.client_secret}
        assert_refused(
            await form_token(client, account.certificate_pem, with_secret), 401, "invalid_client"
        )
        by_basic = await form_token(
            client,
            account.certificate_pem,
            {"grant_type": "client_credentials"},
            authorization=basic(tls.client_id, "whatever-secret"),
        )
        assert_refused(by_basic, 401, "invalid_client")
        foreign = await form_token(client, other.certificate_pem, fields)
        assert_refused(foreign, 401, "invalid_client")
        as_json = await client.post(
            "/api/auth/token",
            json={"clientId": tls.client_id, "clientSecret": "x" * 43},
            headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)},
        )
        assert as_json.status_code == 401
        assert as_json.json()["code"] == "PUB_INVALID_CREDENTIALS"

    async def test_a_secret_credential_needs_its_secret(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        fields = {"grant_type": "client_credentials", "client_id": account.client_id}
        assert_refused(
            await form_token(client, account.certificate_pem, fields), 401, "invalid_client"
        )

    async def test_the_dashboard_refuses_it_cleanly(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        tls = await accounts.create_credential(
            rt, account.account_id, method=AuthMethod.TLS_CLIENT_AUTH
        )
        page = await client.get("/dashboard/login")
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        response = await client.post(
            "/dashboard/login",
            data={"clientId": tls.client_id, "clientSecret": "x" * 43, "csrf": csrf},
        )
        assert response.status_code == 401
        assert "Invalid clientId or clientSecret." in response.text


async def narrowed(
    client: httpx.AsyncClient, account: accounts.NewAccount, scope: str
) -> dict[str, str]:
    """Headers of a request with a token granted only `scope`."""
    response = await form_token(client, account.certificate_pem, by_fields(account, scope=scope))
    assert response.status_code == 200, response.text
    return {
        "Authorization": f"Bearer {response.json()['access_token']}",
        "X-SSL-Client-Cert": cert_header(account.certificate_pem),
    }


def cash_out(external_id: str) -> dict[str, Any]:
    return {
        "value": 3,
        "externalId": external_id,
        "description": "scopes",
        "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
    }


COB = {
    "calendario": {"expiracao": 3600},
    "devedor": {"cpf": CPF, "nome": "Fulano de Tal"},
    "valor": {"original": "10.00"},
}


class TestScopesOnTheSpecRoutes:
    async def test_a_cob_read_token_cannot_write(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt, balance="100")
        reader = await narrowed(client, account, "cob.read")
        refused = await client.post("/api/pix/cash-out", headers=reader, json=cash_out("s-1"))
        assert refused.status_code == 403, refused.text
        assert refused.json()["code"] == "FORBIDDEN"
        assert "pix.write" in refused.json()["message"]
        full = await bearer(client, account)
        sent = await client.post("/api/pix/cash-out", headers=full, json=cash_out("s-2"))
        assert sent.status_code == 201, sent.text

    async def test_a_cob_read_token_cannot_create_a_cob(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        reader = await narrowed(client, account, "cob.read")
        cob = await client.put("/cob/" + "s" * 30, headers=reader, json=COB)
        assert cob.status_code == 403, cob.text
        assert set(cob.json()) == {"statusCode", "message", "error"}
        writer = await narrowed(client, account, "cob.write")
        assert (await client.put("/cob/" + "s" * 30, headers=writer, json=COB)).status_code == 201

    async def test_each_family_answers_its_403(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        writer = await narrowed(client, account, "pix.write")
        balances = await client.get("/accounts/balances", headers=writer)
        assert balances.status_code == 403
        assert balances.json() == {
            "statusCode": 403,
            "message": "the access token lacks the scope pix.read",
            "error": "Forbidden",
        }
        statement = await client.get("/api/transactions", headers=writer)
        assert statement.status_code == 403
        assert statement.json()["code"] == "FORBIDDEN"
        hooks = await client.get("/api/webhooks", headers=writer)
        assert hooks.status_code == 403

    @pytest.mark.parametrize(
        ("scope", "method", "path", "allowed"),
        [
            ("pix.read", "GET", "/accounts/balances", True),
            ("pix.read", "GET", "/api/balance", True),
            ("pix.read", "GET", "/api/transactions", True),
            ("pix.read", "GET", "/api/med", True),
            ("webhook.read", "GET", "/api/webhooks", True),
            ("webhook.read", "GET", "/api/events", True),
            ("cob.write", "GET", "/api/transactions", False),
            ("pix.write", "GET", "/api/med", False),
            ("webhook.write", "GET", "/api/webhooks", False),
        ],
    )
    async def test_reads_need_their_scope(
        self,
        rt: Runtime,
        client: httpx.AsyncClient,
        scope: str,
        method: str,
        path: str,
        allowed: bool,
    ) -> None:
        account = await make_account(rt)
        headers = await narrowed(client, account, scope)
        response = await client.request(method, path, headers=headers)
        assert (response.status_code != 403) == allowed, response.text
        if allowed:
            assert response.status_code == 200, response.text

    async def test_cash_in_needs_cob_write(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        body = {
            "transaction": {"value": 5, "description": "scopes", "externalId": "scope-in"},
            "payer": {"fullName": "Fulano", "document": CPF},
        }
        refused = await client.post(
            "/api/pix/cash-in", headers=await narrowed(client, account, "pix.write"), json=body
        )
        assert refused.status_code == 403
        created = await client.post(
            "/api/pix/cash-in", headers=await narrowed(client, account, "cob.write"), json=body
        )
        assert created.status_code == 201, created.text

    async def test_the_document_names_each_operations_scope(
        self, client: httpx.AsyncClient
    ) -> None:
        paths = (await client.get("/openapi.json")).json()["paths"]
        forbidden = paths["/api/pix/cash-out"]["post"]["responses"]["403"]
        assert "`pix.write`" in forbidden["description"]
        assert "`pix.read`" in paths["/accounts/balances"]["get"]["responses"]["403"]["description"]
