"""POST /api/auth/token and /oauth/token, and bearer verification."""

from __future__ import annotations

import base64
import json
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pixgate.accounts.rules import certificates
from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from tests.helpers import bearer, cert_header, make_account
from tests.secret_hunt import self_signed

TOKEN = "/api/auth/token"


def _self_signed(not_before: datetime, not_after: datetime) -> str:
    """A certificate nobody registered, valid between the two instants (its PEM)."""
    pem, _ = self_signed(not_before, not_after)
    return pem


async def _token(
    client: httpx.AsyncClient,
    account: accounts.NewAccount,
    *,
    pem: str | None = None,
    secret: str | None = None,
    client_id: str | None = None,
    path: str = TOKEN,
) -> httpx.Response:
    return await client.post(
        path,
        json={
            "clientId": client_id or account.client_id,
            "clientSecret": secret or account.client_secret,
        },
        headers={"X-SSL-Client-Cert": cert_header(pem or account.certificate_pem)},
    )


def _bound(account: accounts.NewAccount, token: str) -> dict[str, str]:
    """A request with `token` and the certificate the account's tokens are bound to."""
    return {
        "Authorization": f"Bearer {token}",
        "X-SSL-Client-Cert": cert_header(account.certificate_pem),
    }


def _assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusCode"] == status
    assert body["code"] == code
    assert body["path"] == TOKEN
    assert body["method"] == "POST"
    assert body["errorId"]
    assert body["timestamp"].endswith("Z")
    assert isinstance(body["userMessage"], str) and body["userMessage"]
    assert body["error"]
    return dict(body)


class TestIssue:
    async def test_issues_a_bearer_token_for_1800_seconds(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await _token(client, account)
        assert response.status_code == 201
        body = response.json()
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == 1800
        claims = jwt.decode(body["access_token"], options={"verify_signature": False})
        assert claims["sub"] == account.client_id
        assert claims["acc"] == account.account_id
        assert claims["exp"] - claims["iat"] == 1800
        assert claims["jti"] and claims["iss"] and claims["aud"]
        digest = bytes.fromhex(account.certificate_fingerprint)
        expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        assert claims["cnf"] == {"x5t#S256": expected}

    async def test_oauth_alias_answers_the_same(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await _token(client, account, path="/oauth/token")
        assert response.status_code == 201
        assert response.json()["token_type"] == "Bearer"

    async def test_raw_plus_in_base64_is_not_a_space(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """A certificate whose base64 holds '+' must survive RFC 3986 decoding."""
        for _ in range(20):
            account = await make_account(rt)
            if "+" in account.certificate_pem:
                break
        assert "+" in account.certificate_pem
        response = await _token(client, account)
        assert response.status_code == 201


class TestCertificateChecks:
    async def test_header_missing(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        response = await client.post(
            TOKEN, json={"clientId": account.client_id, "clientSecret": account.client_secret}
        )
        _assert_envelope(response, 400, "PUB_CERT_HEADER_MISSING")

    @pytest.mark.parametrize(
        "header",
        ["not a certificate", "-----BEGIN%20CERTIFICATE-----%0AAAAA%0A-----END%20CERTIFICATE-----"],
    )
    async def test_malformed_pem(self, rt: Runtime, client: httpx.AsyncClient, header: str) -> None:
        account = await make_account(rt)
        response = await client.post(
            TOKEN,
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
            headers={"X-SSL-Client-Cert": header},
        )
        _assert_envelope(response, 400, "PUB_CERT_MALFORMED_PEM")

    async def test_plus_decoded_as_space_is_malformed(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        for _ in range(20):
            account = await make_account(rt)
            if "+" in account.certificate_pem:
                break
        broken = cert_header(account.certificate_pem).replace("%2B", "%20")
        response = await client.post(
            TOKEN,
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
            headers={"X-SSL-Client-Cert": broken},
        )
        _assert_envelope(response, 400, "PUB_CERT_MALFORMED_PEM")

    async def test_not_yet_valid(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        pem = _self_signed(now + timedelta(days=1), now + timedelta(days=30))
        await accounts.register_certificate(rt, account.account_id, pem)
        _assert_envelope(await _token(client, account, pem=pem), 401, "PUB_CERT_NOT_YET_VALID")

    async def test_expired(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        pem = _self_signed(now - timedelta(days=30), now - timedelta(days=1))
        await accounts.register_certificate(rt, account.account_id, pem)
        _assert_envelope(await _token(client, account, pem=pem), 401, "PUB_CERT_EXPIRED")

    async def test_not_registered(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        now = datetime.now(UTC)
        pem = _self_signed(now - timedelta(days=1), now + timedelta(days=1))
        _assert_envelope(await _token(client, account, pem=pem), 401, "PUB_CERT_NOT_REGISTERED")

    async def test_revoked_certificate_is_not_registered(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        await accounts.revoke_certificate(rt, account.certificate_fingerprint.upper())
        _assert_envelope(await _token(client, account), 401, "PUB_CERT_NOT_REGISTERED")

    async def test_certificate_of_another_account(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """403 once the credential is proven: only its holder learns the certificate is wrong."""
        mine, theirs = await make_account(rt), await make_account(rt, name="Outra")
        response = await _token(client, mine, pem=theirs.certificate_pem)
        _assert_envelope(response, 403, "PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT")


class TestCredentials:
    async def test_wrong_secret_and_unknown_client_are_indistinguishable(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        wrong = await _token(client, account, secret="x" * 43)
        unknown = await _token(client, account, client_id=str(uuid.uuid4()))
        for response in (wrong, unknown):
            _assert_envelope(response, 401, "PUB_INVALID_CREDENTIALS")
        strip = ("errorId", "timestamp")
        assert {k: v for k, v in wrong.json().items() if k not in strip} == {
            k: v for k, v in unknown.json().items() if k not in strip
        }

    @pytest.mark.parametrize("path", [TOKEN, "/oauth/token"])
    async def test_a_foreign_certificate_does_not_tell_which_clientids_exist(
        self, rt: Runtime, client: httpx.AsyncClient, path: str
    ) -> None:
        """An existing clientId (wrong secret) and an unknown one, each with a certificate of
        another account: the same status and body, so probing cannot list clientIds."""
        mine, theirs = await make_account(rt), await make_account(rt, name="Outra")
        answers = [
            await _token(
                client, mine, pem=theirs.certificate_pem, secret="x" * 43, client_id=who, path=path
            )
            for who in (mine.client_id, str(uuid.uuid4()))
        ]
        existing, unknown = answers
        assert existing.status_code == unknown.status_code == 401, existing.text
        assert existing.headers.keys() == unknown.headers.keys()
        strip = ("errorId", "timestamp")
        assert {k: v for k, v in existing.json().items() if k not in strip} == {
            k: v for k, v in unknown.json().items() if k not in strip
        }
        if path == TOKEN:
            _assert_envelope(existing, 401, "PUB_INVALID_CREDENTIALS")

    async def test_both_failure_paths_cost_the_same_work(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        """Same work on both paths: a lookup and one HMAC compare (timing class, not timing)."""
        from pixgate.accounts.service import auth as auth_service

        account = await make_account(rt)
        calls: list[str] = []
        original = auth_service.hash_secret

        def counting(key: bytes, secret: str) -> bytes:
            calls.append(secret)
            return original(key, secret)

        other = await make_account(rt, name="Outra")
        auth_service.hash_secret = counting  # type: ignore[assignment]
        try:
            await _token(client, account, secret="y" * 40)
            await _token(client, account, client_id=str(uuid.uuid4()), secret="y" * 40)
            await _token(client, account, pem=other.certificate_pem, secret="y" * 40)
        finally:
            auth_service.hash_secret = original  # type: ignore[assignment]
        assert calls == ["y" * 40] * 3

    async def test_revoked_credential(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        await accounts.revoke_credential(rt, account.client_id)
        _assert_envelope(await _token(client, account), 401, "PUB_INVALID_CREDENTIALS")

    async def test_second_credential_works(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        extra = await accounts.create_credential(rt, account.account_id)
        response = await _token(
            client, account, client_id=extra.client_id, secret=extra.client_secret
        )
        assert response.status_code == 201


class TestBodyValidation:
    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"clientSecret": "s" * 20}, "clientId"),
            ({"clientId": str(uuid.uuid4())}, "clientSecret"),
            ({"clientId": 12, "clientSecret": "s" * 20}, "clientId"),
            ({"clientId": str(uuid.uuid1()), "clientSecret": "s" * 20}, "clientId"),
            ({"clientId": "not-a-uuid", "clientSecret": "s" * 20}, "clientId"),
            ({"clientId": str(uuid.uuid4()), "clientSecret": "short"}, "clientSecret"),
            ({"clientId": str(uuid.uuid4()), "clientSecret": "s" * 65}, "clientSecret"),
            ({"clientId": str(uuid.uuid4()), "clientSecret": 123456789}, "clientSecret"),
        ],
    )
    async def test_schema_violations(
        self, rt: Runtime, client: httpx.AsyncClient, body: dict[str, object], field: str
    ) -> None:
        account = await make_account(rt)
        response = await client.post(
            TOKEN, json=body, headers={"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
        )
        envelope = _assert_envelope(response, 400, "PUB_REQUEST_BODY_INVALID")
        violations = envelope["details"]["violations"]  # type: ignore[index]
        assert any(v["field"] == field for v in violations)
        assert isinstance(envelope["message"], list)

    async def test_malformed_json(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        response = await client.post(
            TOKEN,
            content=b"{not json",
            headers={
                "X-SSL-Client-Cert": cert_header(account.certificate_pem),
                "Content-Type": "application/json",
            },
        )
        _assert_envelope(response, 400, "PUB_REQUEST_BODY_INVALID")

    async def test_oversized_body_is_413_in_envelope(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        response = await client.post(
            TOKEN,
            content=b"{" + b" " * (rt.settings.max_body_bytes + 10) + b"}",
            headers={
                "X-SSL-Client-Cert": cert_header(account.certificate_pem),
                "Content-Type": "application/json",
            },
        )
        _assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")


class TestBearer:
    """Every endpoint but the token ones needs a valid bearer token; 401 has the simple body."""

    async def _call(self, client: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
        return await client.get("/accounts/balances", headers=headers)

    async def test_valid_token(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        response = await self._call(client, await bearer(client, account))
        assert response.status_code == 200
        assert response.json()["data"][0]["balanceAmount"]["available"] == 0

    @pytest.mark.parametrize("header", [None, "Bearer", "Basic abc", "Bearer not.a.jwt"])
    async def test_missing_or_garbage(
        self, rt: Runtime, client: httpx.AsyncClient, header: str | None
    ) -> None:
        response = await self._call(client, {"Authorization": header} if header else {})
        self._assert_simple_401(response)

    def _assert_simple_401(self, response: httpx.Response) -> None:
        assert response.status_code == 401
        assert set(response.json()) == {"statusCode", "message", "error"}
        assert response.json()["statusCode"] == 401
        assert response.headers["www-authenticate"] == "Bearer"

    def _forge(self, rt: Runtime, token: str, **changes: object) -> dict[str, object]:
        claims = jwt.decode(token, options={"verify_signature": False})
        claims.update(changes)
        return claims

    async def test_alg_none_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        forged = jwt.encode(self._forge(rt, token), key=None, algorithm="none")
        self._assert_simple_401(await self._call(client, _bound(account, forged)))

    async def test_other_algorithm_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        forged = jwt.encode(
            self._forge(rt, token), "a-shared-secret-of-enough-length-x", algorithm="HS256"
        )
        self._assert_simple_401(await self._call(client, _bound(account, forged)))

    async def test_bad_signature_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        forged = jwt.encode(
            self._forge(rt, token),
            Ed25519PrivateKey.generate(),
            algorithm="EdDSA",
            headers={"kid": rt.signer.kid},
        )
        self._assert_simple_401(await self._call(client, _bound(account, forged)))

    async def test_tampered_payload_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        header, _, signature = token.split(".")
        payload = (
            base64.urlsafe_b64encode(json.dumps(self._forge(rt, token, acc=999)).encode())
            .rstrip(b"=")
            .decode()
        )
        forged = f"{header}.{payload}.{signature}"
        self._assert_simple_401(await self._call(client, _bound(account, forged)))

    async def test_expired_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        thumbprint = certificates.from_pem(account.certificate_pem).thumbprint
        old = rt.signer.issue(
            client_id=account.client_id,
            account_id=account.account_id,
            thumbprint=thumbprint,
            now=datetime.now(UTC) - timedelta(hours=1),
            ttl=1800,
        )
        self._assert_simple_401(await self._call(client, _bound(account, old)))

    @pytest.mark.parametrize(
        ("starts", "ends", "reason"),
        [(-30, -1, "notAfter has passed"), (1, 30, "notBefore is in the future")],
        ids=["expired", "not yet valid"],
    )
    async def test_certificate_outside_its_dates_refused(
        self, rt: Runtime, client: httpx.AsyncClient, starts: int, ends: int, reason: str
    ) -> None:
        """A token can outlive its certificate, and the TLS front lets an expired one through:
        the certificate's dates are checked on every request."""
        account = await make_account(rt)
        now = datetime.now(UTC)
        pem = _self_signed(now + timedelta(days=starts), now + timedelta(days=ends))
        await accounts.register_certificate(rt, account.account_id, pem)
        token = rt.signer.issue(
            client_id=account.client_id,
            account_id=account.account_id,
            thumbprint=certificates.from_pem(pem).thumbprint,
            now=now,
            ttl=1800,
        )
        response = await self._call(
            client, {"Authorization": f"Bearer {token}", "X-SSL-Client-Cert": cert_header(pem)}
        )
        self._assert_simple_401(response)
        assert reason in response.json()["message"]

    async def test_wrong_audience_refused(self, rt: Runtime, client: httpx.AsyncClient) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        claims = self._forge(rt, token, aud="someone-else", exp=int(time.time()) + 600)
        forged = jwt.encode(claims, rt.signer._private, algorithm="EdDSA")
        self._assert_simple_401(await self._call(client, _bound(account, forged)))

    async def test_certificate_must_match_binding(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        mine, theirs = await make_account(rt), await make_account(rt, name="Outra")
        headers = await bearer(client, mine)
        same = await self._call(
            client, {**headers, "X-SSL-Client-Cert": cert_header(mine.certificate_pem)}
        )
        assert same.status_code == 200
        other = await self._call(
            client, {**headers, "X-SSL-Client-Cert": cert_header(theirs.certificate_pem)}
        )
        self._assert_simple_401(other)

    async def test_jwks_verifies_issued_tokens(
        self, rt: Runtime, client: httpx.AsyncClient
    ) -> None:
        account = await make_account(rt)
        token = (await bearer(client, account))["Authorization"].split()[1]
        jwks = (await client.get("/.well-known/jwks.json")).json()
        key = jwt.PyJWK(jwks["keys"][0])
        claims = jwt.decode(token, key.key, algorithms=["EdDSA"], audience=rt.settings.jwt_audience)
        assert claims["acc"] == account.account_id
        assert jwt.get_unverified_header(token)["kid"] == jwks["keys"][0]["kid"]
