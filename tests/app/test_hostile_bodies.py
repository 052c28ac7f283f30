"""The worst bodies of the largest size a real `pixgate serve` reads, with and without a token:
each answers a short 4xx in its route's family, and the API process's peak resident memory
rises by less than 50 MiB (the shapes: bench/hostile_shapes.py; their timings:
bench/hostile_input.py)."""

from __future__ import annotations

import httpx
import pytest

from bench.hostile_shapes import SHAPES, cost_of
from pixgate.accounts.service import accounts
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from tests.helpers import cert_header, make_account
from tests.processes import serving_process

PEAK_MIB = 50
ANSWER_BYTES = 4096
TXID = "hostile" + "0" * 23
ROUTES = {
    "POST": "/api/pix/cash-out",  # the spec's envelope
    "PUT": f"/cob/{TXID}",  # the Central Bank's simple body
    "PATCH": f"/cob/{TXID}",
}


@pytest.fixture
async def account(rt: Runtime) -> accounts.NewAccount:
    return await make_account(rt)


@pytest.mark.parametrize("shape", SHAPES)
def test_no_body_shape_costs_more_than_its_bound(
    account: accounts.NewAccount, database_url: str, base_settings: Settings, shape: str
) -> None:
    """Each shape in a process of its own: memory a shape before it left to the allocator
    would hide what this one costs."""
    body = SHAPES[shape](base_settings.max_body_bytes)
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    json_type = {"Content-Type": "application/json"}
    with serving_process(database_url) as (base, pid), httpx.Client(base_url=base) as client:
        issued = client.post(
            "/api/auth/token",
            headers=certificate,
            json={"clientId": account.client_id, "clientSecret": account.client_secret},
        )
        assert issued.status_code == 201, issued.text
        token = issued.json()["access_token"]
        signed_in = {**json_type, **certificate, "Authorization": f"Bearer {token}"}
        for headers in (json_type, signed_in):
            for method, path in ROUTES.items():
                case = f"{method} {path}, {'token' if headers is signed_in else 'none'}"
                cost = cost_of(client, pid, method, path, body, headers)
                assert 400 <= cost.status < 500, (case, cost.answer[:300])
                assert cost.answer_bytes < ANSWER_BYTES, (case, cost.answer_bytes)
                assert cost.peak_mib < PEAK_MIB, (case, cost.peak_mib)
        assert client.get("/healthz").status_code == 200


FORMS = {
    "many fields": lambda size: "&".join(f"f{i}=" for i in range(size // 4))[:size].encode(),
    "one long value": lambda size: b"clientId=" + b"x" * (size - 9),
    "percent-escapes": lambda size: b"clientId=" + b"%41" * ((size - 9) // 3),
}


def test_no_form_costs_more_than_its_bound(
    account: accounts.NewAccount, database_url: str, base_settings: Settings
) -> None:
    """Decoding a form costs far more memory than its size (about 75 bytes per escape), so the
    forms read before authentication (dashboard sign-in, token) are held to a few KB."""
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    with serving_process(database_url) as (base, pid), httpx.Client(base_url=base) as client:
        for name, build in FORMS.items():
            body = build(base_settings.max_body_bytes)
            for path in ("/dashboard/login", "/api/auth/token"):
                cost = cost_of(client, pid, "POST", path, body, form_type | certificate)
                assert cost.status == 413, (name, path, cost.answer[:300])
                assert cost.peak_mib < PEAK_MIB, (name, path, cost.peak_mib)
