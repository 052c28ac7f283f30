"""The CLI contract of the foundation issue, run through Typer's CliRunner on the test database."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import asyncpg
import pytest
from typer.testing import CliRunner

from pixgate.accounts.rules import certificates
from pixgate.cli import app
from pixgate.runtime import Runtime

runner = CliRunner()


@pytest.fixture
def env(rt: Runtime) -> dict[str, str]:
    assert rt.settings.database_url
    return {"PIXGATE_DATABASE_URL": rt.settings.database_url}


def sql(env: dict[str, str], query: str, *args: object) -> object:
    """One query on a fresh connection (the runtime's pool belongs to the test loop)."""

    async def run() -> object:
        conn = await asyncpg.connect(env["PIXGATE_DATABASE_URL"])
        try:
            return await conn.fetchval(query, *args)
        finally:
            await conn.close()

    return asyncio.run(run())


def _invoke(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.output


def test_accounts_create_json_contract(rt: Runtime, env: dict[str, str]) -> None:
    code, out = _invoke(env, "accounts", "create", "--name", "Loja", "--balance", "12.34", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert set(data) == {
        "accountId",
        "clientId",
        "clientSecret",
        "certificatePem",
        "privateKeyPem",
        "certificateFingerprint",
        "pixKey",
    }
    assert len(data["clientSecret"]) >= 32
    owner = sql(env, "SELECT account_id FROM account_keys WHERE key = $1", data["pixKey"])
    assert owner == data["accountId"]
    assert sql(env, "SELECT key_type FROM account_keys WHERE key = $1", data["pixKey"]) == "EVP"
    cert = certificates.from_pem(data["certificatePem"])
    assert cert.fingerprint == data["certificateFingerprint"]
    available = sql(env, "SELECT available FROM accounts WHERE id = $1", data["accountId"])
    stored = sql(
        env, "SELECT secret_hash FROM credentials WHERE client_id = $1::uuid", data["clientId"]
    )
    postings = sql(
        env, "SELECT count(*) FROM ledger_postings WHERE account_id = $1", data["accountId"]
    )
    assert available == 1234
    assert isinstance(stored, bytes) and data["clientSecret"].encode() not in stored
    assert postings == 1


def test_balance_seed_refused_outside_sandbox(rt: Runtime, env: dict[str, str]) -> None:
    code, out = _invoke(
        {**env, "PIXGATE_SANDBOX": "false"},
        "accounts",
        "create",
        "--name",
        "X",
        "--balance",
        "1.00",
    )
    assert code == 1
    assert "sandbox" in out


def test_invalid_document_refused(rt: Runtime, env: dict[str, str]) -> None:
    code, out = _invoke(env, "accounts", "create", "--name", "X", "--document", "12345678900")
    assert code == 1
    assert "HTTP_ERROR" in out


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "must not be empty"),
        ("  \t ", "must not be empty"),
        ("x" * 101, "at most 100 characters"),
        ("Loja\nFalsa", "control characters (U+000A found)"),
        ("Loja\x7f", "control characters (U+007F found)"),
        ("Loja \u2028Nova", "control characters (U+2028 found)"),
        ("Loja \u202eairaF", "control characters (U+202E found)"),
    ],
)
def test_names_that_are_not_text_are_refused(
    rt: Runtime, env: dict[str, str], name: str, reason: str
) -> None:
    code, out = _invoke(env, "accounts", "create", "--name", name)
    assert code == 1, out
    assert "error: HTTP_ERROR: name: must " in out and reason in out
    assert sql(env, "SELECT count(*) FROM accounts") == 0


@pytest.mark.parametrize("name", ["東京商店", "مطعم الشام", "😀", "  Loja  ", "ç" * 100])
def test_names_in_any_script_are_kept(rt: Runtime, env: dict[str, str], name: str) -> None:
    code, out = _invoke(env, "accounts", "create", "--name", name, "--json")
    assert code == 0, out
    created = json.loads(out)
    assert sql(env, "SELECT name FROM accounts WHERE id = $1", created["accountId"]) == name.strip()
    subject = certificates.from_pem(created["certificatePem"]).subject
    assert subject.startswith("CN=pixgate client ")


def test_accounts_list_show_update(rt: Runtime, env: dict[str, str]) -> None:
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account_id = str(json.loads(out)["accountId"])
    code, out = _invoke(
        env,
        "accounts",
        "update",
        account_id,
        "--daily-limit",
        "5000.00",
        "--night-limit",
        "300",
        "--fee",
        "cash_out=0.50+1%",
        "--split-frequency",
        "daily",
        "--json",
    )
    assert code == 0, out
    code, out = _invoke(env, "accounts", "show", account_id, "--json")
    shown = json.loads(out)
    assert shown["dailyLimit"] == "5000.00"
    assert shown["nightLimit"] == "300.00"
    assert shown["fees"]["cash_out"] == {"fixed": "0.50", "percent": "1"}
    assert shown["splitFrequency"] == "daily"
    code, out = _invoke(env, "accounts", "list", "--json")
    assert [a["accountId"] for a in json.loads(out)] == [int(account_id)]
    code, out = _invoke(env, "accounts", "show", "999")
    assert code == 1


def test_credentials_create_and_revoke(rt: Runtime, env: dict[str, str]) -> None:
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account_id = str(json.loads(out)["accountId"])
    code, out = _invoke(env, "credentials", "create", "--account", account_id, "--json")
    assert code == 0
    client_id = json.loads(out)["clientId"]
    assert _invoke(env, "credentials", "revoke", client_id)[0] == 0
    assert _invoke(env, "credentials", "revoke", client_id)[0] == 1


def test_credentials_create_tls_client_auth(rt: Runtime, env: dict[str, str]) -> None:
    """A certificate-only credential (RFC 8705 tls_client_auth): no secret shown or kept."""
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account_id = str(json.loads(out)["accountId"])
    code, out = _invoke(
        env, "credentials", "create", "--account", account_id, "--tls-client-auth", "--json"
    )
    assert code == 0, out
    data = json.loads(out)
    assert data == {
        "accountId": int(account_id),
        "clientId": data["clientId"],
        "authMethod": "tls_client_auth",
    }
    row = "SELECT auth_method || ':' || (secret_hash IS NULL) FROM credentials WHERE client_id = $1"
    assert sql(env, row, uuid.UUID(data["clientId"])) == "tls_client_auth:true"
    code, out = _invoke(env, "credentials", "create", "--account", account_id, "--json")
    assert json.loads(out)["authMethod"] == "client_secret"
    assert len(json.loads(out)["clientSecret"]) >= 32


def test_certs_register_and_revoke_any_case_with_colons(
    rt: Runtime, env: dict[str, str], tmp_path: Path
) -> None:
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account_id = str(json.loads(out)["accountId"])
    issued = certificates.issue_client_certificate("extra")
    pem = tmp_path / "cert.pem"
    pem.write_text(issued.certificate_pem)
    code, out = _invoke(
        env, "certs", "register", "--account", account_id, "--pem", str(pem), "--json"
    )
    assert code == 0, out
    fingerprint = json.loads(out)["certificateFingerprint"]
    assert fingerprint == issued.certificate.fingerprint
    assert _invoke(env, "certs", "register", "--account", account_id, "--pem", str(pem))[0] == 1
    colons = ":".join(fingerprint[i : i + 2] for i in range(0, 64, 2)).upper()
    code, out = _invoke(env, "certs", "revoke", colons)
    assert code == 0, out
    assert sql(
        env, "SELECT revoked_at IS NOT NULL FROM certificates WHERE fingerprint = $1", fingerprint
    )


def test_ledger_verify(rt: Runtime, env: dict[str, str]) -> None:
    _invoke(env, "accounts", "create", "--name", "Loja", "--balance", "5.00")
    code, out = _invoke(env, "ledger", "verify")
    assert code == 0
    assert "ledger balances" in out
    sql(env, "UPDATE accounts SET available = available + 1")
    code, out = _invoke(env, "ledger", "verify")
    assert code == 1
    assert "journal" in out
    sql(env, "UPDATE accounts SET available = available - 1")


def test_ledger_verify_catches_limit_usage_that_differs_from_payments(
    rt: Runtime, env: dict[str, str]
) -> None:
    _invoke(env, "accounts", "create", "--name", "Loja", "--balance", "5.00")
    account_id = sql(env, "SELECT id FROM accounts")
    sql(
        env,
        "INSERT INTO limit_usage (account_id, bucket, used) VALUES ($1, now(), 700)",
        account_id,
    )
    code, out = _invoke(env, "ledger", "verify")
    assert code == 1
    assert "limit usage" in out and "counts 700, payments sent 0" in out
    sql(env, "DELETE FROM limit_usage")


@pytest.mark.parametrize("city", ["東京", "  ", "🏙️"])
def test_a_merchant_city_no_br_code_can_carry_is_refused_at_start(
    rt: Runtime, env: dict[str, str], city: str
) -> None:
    """Every charge's BR Code carries the city: one with nothing printable made each a 500."""
    result = runner.invoke(app, ["accounts", "list"], env={**env, "PIXGATE_MERCHANT_CITY": city})
    assert result.exit_code != 0
    assert "merchant_city" in str(result.exception)
    assert "needs a character of printable ASCII" in str(result.exception)
