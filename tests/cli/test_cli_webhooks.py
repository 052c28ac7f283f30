"""`pixgate webhooks ...`: the same rules as the API, through Typer's CliRunner."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest
from typer.testing import CliRunner

from pixgate.cli import app
from pixgate.runtime import Runtime
from tests.webhooks import refused_config as refused

runner = CliRunner()


@pytest.fixture
def env(rt: Runtime) -> dict[str, str]:
    assert rt.settings.database_url
    return {
        "PIXGATE_DATABASE_URL": rt.settings.database_url,
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
    }


def _invoke(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env=env)
    return result.exit_code, result.output


def _count(env: dict[str, str]) -> int:
    async def run() -> int:
        conn = await asyncpg.connect(env["PIXGATE_DATABASE_URL"])
        try:
            count: int = await conn.fetchval("SELECT count(*) FROM webhook_endpoints")
            return count
        finally:
            await conn.close()

    return asyncio.run(run())


def test_add_list_secret_rotate_remove(rt: Runtime, env: dict[str, str]) -> None:
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account = str(json.loads(out)["accountId"])
    code, out = _invoke(
        env,
        "webhooks",
        "add",
        "--account",
        account,
        "--event",
        "cash_out",
        "--url",
        "http://127.0.0.1:9/hook",
        "--version",
        "v2",
        "--header",
        "X-Token=abc",
        "--json",
    )
    assert code == 0, out
    added = json.loads(out)
    # values are masked on output, as the API and the dashboard show them
    assert added["created"] is True and added["headers"] == {"X-Token": "******"}

    code, out = _invoke(env, "webhooks", "list", "--account", account, "--json")
    listed = json.loads(out)
    assert listed["total"] == 1 and listed["webhooks"][0]["version"] == "v2"
    code, out = _invoke(env, "webhooks", "list", "--account", account)
    assert code == 0 and "X-Token: ******" in out and "abc" not in out

    code, out = _invoke(env, "webhooks", "secret", "--account", account, "--json")
    assert code == 0 and json.loads(out)["secret"].startswith("whsec_")
    code, out = _invoke(env, "webhooks", "secret", "--account", account, "--json")
    assert code == 1 and "rotate" in out  # shown once
    code, out = _invoke(env, "webhooks", "secret", "--account", account, "--rotate", "--json")
    assert code == 0 and json.loads(out)["secret"].startswith("whsec_")

    code, out = _invoke(env, "webhooks", "remove", str(added["id"]))
    assert code == 0 and _count(env) == 0
    assert _invoke(env, "webhooks", "remove", str(added["id"]))[0] == 1


def test_same_rules_as_the_api(rt: Runtime, env: dict[str, str]) -> None:
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    account = str(json.loads(out)["accountId"])
    secure = {**env, "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "false"}
    code, out = _invoke(
        secure,
        "webhooks",
        "add",
        "--account",
        account,
        "--event",
        "cash_out",
        "--url",
        "http://127.0.0.1/hook",
    )
    assert code == 1 and "WEBHOOK_UNSAFE_DESTINATION" in out
    assert "PIXGATE_ALLOW_INSECURE_WEBHOOKS=true" in out  # the way out, for local receivers
    code, out = _invoke(
        env,
        "webhooks",
        "add",
        "--account",
        account,
        "--event",
        "nope",
        "--url",
        "http://127.0.0.1/hook",
    )
    assert code == 1 and "WEBHOOK_INVALID_CONFIGURATION" in out
    code, out = _invoke(
        env,
        "webhooks",
        "add",
        "--account",
        "999999",
        "--event",
        "cash_out",
        "--url",
        "http://127.0.0.1/hook",
    )
    assert code == 1 and "NOT_FOUND" in out
    assert _count(env) == 0


def test_control_characters_and_bad_header_names_are_refused(
    rt: Runtime, env: dict[str, str]
) -> None:
    """The API's rule (one rule, in the domain): exit 1 with the code, nothing stored."""
    _, out = _invoke(env, "accounts", "create", "--name", "Loja", "--json")
    add = ("webhooks", "add", "--account", str(json.loads(out)["accountId"]), "--event", "cash_in")
    calls = [
        *(("--url", url, "--header", "X-Token=t0k3n") for url in refused.URLS.values()),
        *(
            ("--url", refused.VALID_URL, "--header", f"{name}=t0k3n")
            for name in refused.HEADER_NAMES.values()
        ),
        *(
            ("--url", refused.VALID_URL, "--header", f"X-Token={value}")
            for value in refused.HEADER_VALUES.values()
        ),
    ]
    for call in calls:
        code, out = _invoke(env, *add, *call)
        assert code == 1 and "error: WEBHOOK_INVALID_CONFIGURATION: " in out, (call, out)
        assert "t0k3n" not in out
    assert _count(env) == 0
