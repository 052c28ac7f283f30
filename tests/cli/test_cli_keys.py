"""`pixgate accounts keys add|list|remove`, through Typer's CliRunner on the test database."""

from __future__ import annotations

import json
import uuid

import pytest

from pixgate.runtime import Runtime
from tests.cli.test_cli import _invoke, env, sql

__all__ = ["env"]

CNPJ = "11222333000181"
CPF = "52998224725"


def create(env: dict[str, str], *extra: str) -> dict[str, object]:
    code, out = _invoke(env, "accounts", "create", "--name", "Loja", *extra, "--json")
    assert code == 0, out
    created: dict[str, object] = json.loads(out)
    return created


def keys_of(env: dict[str, str], account_id: object) -> list[dict[str, object]]:
    code, out = _invoke(env, "accounts", "keys", "list", "--account", str(account_id), "--json")
    assert code == 0, out
    listed = json.loads(out)
    assert listed["accountId"] == account_id
    keys: list[dict[str, object]] = listed["keys"]
    return keys


def test_add_list_remove_every_type(rt: Runtime, env: dict[str, str]) -> None:
    account = create(env, "--document", "11.222.333/0001-81")
    account_id = account["accountId"]
    evp = str(uuid.uuid4()).upper()
    for written, stored, key_type in [
        (CNPJ, CNPJ, "CNPJ"),
        ("+5511987654321", "+5511987654321", "PHONE"),
        ("Vendas@Loja.com.BR", "vendas@loja.com.br", "EMAIL"),
        (evp, evp.lower(), "EVP"),
    ]:
        code, out = _invoke(
            env, "accounts", "keys", "add", "--account", str(account_id), written, "--json"
        )
        assert code == 0, out
        added = json.loads(out)
        assert (added["key"], added["keyType"], added["accountId"]) == (
            stored,
            key_type,
            account_id,
        )
        assert added["createdAt"].endswith("Z")
        owner = sql(env, "SELECT account_id FROM account_keys WHERE key = $1", stored)
        assert owner == account_id
    code, out = _invoke(env, "accounts", "keys", "add", "--account", str(account_id), "--random")
    assert code == 0, out
    assert "(EVP) added to account" in out

    listed = keys_of(env, account_id)
    assert [k["key"] for k in listed][:5] == [
        account["pixKey"],
        CNPJ,
        "+5511987654321",
        "vendas@loja.com.br",
        evp.lower(),
    ]
    assert [k["keyType"] for k in listed] == ["EVP", "CNPJ", "PHONE", "EMAIL", "EVP", "EVP"]
    code, out = _invoke(env, "accounts", "keys", "list", "--account", str(account_id))
    assert code == 0 and "vendas@loja.com.br" in out

    # any spelling of a key removes it
    code, out = _invoke(
        env, "accounts", "keys", "remove", "--account", str(account_id), "VENDAS@loja.com.br"
    )
    assert code == 0, out
    assert "key vendas@loja.com.br removed" in out
    assert "vendas@loja.com.br" not in [k["key"] for k in keys_of(env, account_id)]
    code, out = _invoke(
        env, "accounts", "keys", "remove", "--account", str(account_id), "vendas@loja.com.br"
    )
    assert code == 1
    assert "NOT_FOUND" in out and "holds no key vendas@loja.com.br" in out


def test_a_key_names_one_account(rt: Runtime, env: dict[str, str]) -> None:
    one, two = create(env), create(env)
    email = "caixa@example.com"
    assert (
        _invoke(env, "accounts", "keys", "add", "--account", str(one["accountId"]), email)[0] == 0
    )
    for account in (one, two):
        code, out = _invoke(
            env, "accounts", "keys", "add", "--account", str(account["accountId"]), email.upper()
        )
        assert code == 1
        assert f"CONFLICT: key {email} is already held by account {one['accountId']}" in out
    # another account's key is not this one's to remove
    code, out = _invoke(
        env, "accounts", "keys", "remove", "--account", str(two["accountId"]), str(one["pixKey"])
    )
    assert code == 1 and "NOT_FOUND" in out
    assert sql(env, "SELECT count(*) FROM account_keys WHERE key = $1", one["pixKey"]) == 1


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("1198765432", "is not a PIX key"),  # a phone needs +55
        ("11987654321", "a CPF key must be"),  # eleven digits are a CPF's form
        ("123e4567e12b42d3a456426614174000", "is not a PIX key"),  # an EVP is hyphenated
        ("not a key", "is not a PIX key"),
        (CPF, "a CPF key must be the account's own document (11222333000181)"),
        ("11444777000161", "a CNPJ key must be the account's own document (11222333000181)"),
    ],
)
def test_refused_keys(rt: Runtime, env: dict[str, str], key: str, reason: str) -> None:
    account = create(env, "--document", CNPJ)
    code, out = _invoke(env, "accounts", "keys", "add", "--account", str(account["accountId"]), key)
    assert code == 1, out
    assert "HTTP_ERROR" in out and reason in out
    assert sql(env, "SELECT count(*) FROM account_keys") == 1  # the account's first EVP only


def test_document_key_of_an_account_without_document(rt: Runtime, env: dict[str, str]) -> None:
    account = create(env)
    code, out = _invoke(env, "accounts", "keys", "add", "--account", str(account["accountId"]), CPF)
    assert code == 1
    assert "own document (none)" in out


def test_key_or_random_and_an_account_that_exists(rt: Runtime, env: dict[str, str]) -> None:
    account_id = str(create(env)["accountId"])
    code, out = _invoke(env, "accounts", "keys", "add", "--account", account_id)
    assert code == 2 and "either KEY or --random" in out
    code, out = _invoke(
        env, "accounts", "keys", "add", "--account", account_id, "--random", "a@b.com"
    )
    assert code == 2 and "either KEY or --random" in out
    for args in (
        ("add", "--account", "999", "a@b.com"),
        ("add", "--account", "999", "--random"),
        ("list", "--account", "999"),
        ("remove", "--account", "999", "a@b.com"),
    ):
        code, out = _invoke(env, "accounts", "keys", *args)
        assert code == 1, args
        assert "NOT_FOUND: account 999 not found" in out
