"""`pixgate serve` as a user starts it: what it prints, the public URL its charges carry, and
its warnings about settings that will not work."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from pixgate.cli import serving
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import bearer, make_account
from tests.processes import SERVE, server_env, started


def _json_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the output, each a JSON log entry (one that is not fails the test)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def _insecure_webhook(rt: Runtime, account_id: int) -> int:
    """A URL registered as `pixgate webhooks add` with PIXGATE_ALLOW_INSECURE_WEBHOOKS=true
    for the command alone registers it."""
    insecure = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    settings, rt.settings = rt.settings, insecure
    added = await webhooks.add(rt, account_id, event_type="cash_in", url="http://127.0.0.1:9/h")
    rt.settings = settings
    return added.endpoint.id


async def test_serve_prints_its_addresses_and_derives_the_public_url(
    rt: Runtime, database_url: str, tmp_path: Path
) -> None:
    """On a terminal's logs (not JSON): the banner, and the webhooks it will not deliver."""
    account = await make_account(rt)
    endpoint_id = await _insecure_webhook(rt, account.account_id)
    log = tmp_path / "serve.log"
    env = server_env(database_url, log_json="false")
    with log.open("wb") as output, started(SERVE, env, output=output) as (base, _):
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            body = {
                "transaction": {
                    "value": "1.00",
                    "description": "Pedido 1",
                    "externalId": f"ext-{uuid.uuid4()}",
                },
                "payer": {"fullName": "Maria da Silva", "document": "52998224725"},
            }
            charge = await http.post(
                "/api/pix/cash-in", json=body, headers=await bearer(http, account)
            )
    text = log.read_text()
    assert f"pixgate listening on {base} (API only, no job worker)" in text
    for path in ("/docs", "/dashboard", "/healthz", "/readyz", "/metrics"):
        assert f"{base}{path}" in text
    assert f"public URL  {base}  (from --host and --port" in text
    assert charge.status_code == 201, charge.text
    assert base.removeprefix("http://") + "/qr/v2/" in charge.json()["pixCode"]
    assert (
        f"warning: webhook {endpoint_id} of account {account.account_id}, "
        "http://127.0.0.1:9/h, will not be delivered: url must use HTTPS" in text
    )
    assert "PIXGATE_ALLOW_INSECURE_WEBHOOKS=true" in text
    assert "public_url_mismatch" not in text


async def test_serve_logs_json_lines_only_with_its_warnings(
    rt: Runtime, database_url: str, tmp_path: Path
) -> None:
    """JSON logs (a collector reads them): the addresses as an event, the webhooks the
    server will not deliver by id, and a public URL on loopback but another port."""
    account = await make_account(rt)
    endpoint_id = await _insecure_webhook(rt, account.account_id)
    log = tmp_path / "serve.log"
    env = server_env(database_url, public_url="http://127.0.0.1:1")
    with log.open("wb") as output, started(SERVE, env, output=output) as (base, _):
        pass
    logged = _json_lines(log)
    (listening,) = [e for e in logged if e["event"] == "serve.listening"]
    assert listening["url"] == base
    assert listening["public_url"] == "http://127.0.0.1:1"
    assert listening["public_url_from"] == "PIXGATE_PUBLIC_URL"
    assert listening["docs"] == f"{base}/docs" and listening["metrics"] == f"{base}/metrics"
    (undeliverable,) = [e for e in logged if e["event"] == "webhooks.undeliverable"]
    assert undeliverable["level"] == "warning"
    assert undeliverable["endpoint_ids"] == [endpoint_id]
    assert "http://127.0.0.1:9/h" not in log.read_text()  # ids only: a URL may hold a secret
    (mismatch,) = [e for e in logged if e["event"] == "serve.public_url_mismatch"]
    assert mismatch["level"] == "warning"
    assert "http://127.0.0.1:1" in mismatch["problem"]


@pytest.mark.parametrize(
    ("public_url", "host", "port", "complaint"),
    [
        ("http://127.0.0.1:8080", "127.0.0.1", 9000, "listens on http://127.0.0.1:9000"),
        ("http://localhost:9000", "127.0.0.1", 9000, None),
        ("http://127.0.0.1:9000", "0.0.0.0", 9000, None),
        ("https://127.0.0.1:9000", "127.0.0.1", 9000, "listens on http://127.0.0.1:9000"),
        ("http://10.0.0.5:8080", "10.0.0.5", 9000, "listens on http://10.0.0.5:9000"),
        ("http://127.0.0.1:9000", "10.0.0.5", 9000, "not on loopback"),
        ("https://pix.example.com", "127.0.0.1", 9000, None),  # a proxy in front
        ("http://pix.example.com:8080", "0.0.0.0", 9000, None),  # another host: unknowable
        ("http://pix.example.com:port", "127.0.0.1", 9000, "no valid port"),
    ],
)
def test_public_url_mismatch(public_url: str, host: str, port: int, complaint: str | None) -> None:
    problem = serving.public_url_mismatch(public_url, host, port)
    if complaint is None:
        assert problem is None
    else:
        assert problem is not None and complaint in problem


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("0.0.0.0", "http://127.0.0.1:9000"),
        ("::", "http://127.0.0.1:9000"),
        ("::1", "http://[::1]:9000"),
    ],
)
def test_local_url(host: str, url: str) -> None:
    assert serving.local_url(host, 9000) == url
