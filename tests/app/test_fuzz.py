"""The hostile-input sweep (security item 6): every operation of the OpenAPI document, fuzzed.

schemathesis generates requests from `app.openapi()` (valid ones, and invalid ones for every
schema keyword: wrong types, out-of-range numbers, strings that break patterns, missing
fields) and sends them in-process to a real app on the test database, authenticated as a
seeded account that owns a few objects, so lookups can hit. Every answer must:

- never be a 5xx (`not_a_server_error`),
- have a status the operation declares (`status_code_conformance`),
- have a body that validates against the schema declared for that status
  (`response_schema_conformance`), in the declared media type (`content_type_conformance`).

Amounts get values across their whole declared range and just outside it, and names text in
any script (`fuzz_fields`), where schemathesis' own generation never went. Stateless,
derandomized (the same cases every run) and small enough for CI, which runs it as part of the
suite. The app makes no connection outside this machine: host resolution for webhooks is
replaced so that only the seeded receiver (a reserved loopback port nobody listens on)
resolves.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi.routing import APIRoute, iter_route_contexts
from hypothesis import HealthCheck, settings
from hypothesis.strategies import SearchStrategy
from schemathesis.checks import not_a_server_error
from schemathesis.hooks import HookContext
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from pixgate.app import create_app
from pixgate.core.errors import UnsafeWebhookDestination
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from pixgate.webhooks.service import transport
from tests.app.fuzz_fields import body_fields, refill
from tests.helpers import bearer, make_account
from tests.support import drain

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]
MAX_EXAMPLES = 50
"""Generated cases per operation, on top of schemathesis' examples and boundary-value
(coverage) cases, which already reach every schema keyword of every operation."""
SHARED_SHAPE_EXAMPLES = 10
"""Generated cases of an operation whose parameters and body are exactly an earlier one's
(an alias path, the API Pix family's copy of a root-level route, the GETs that take nothing):
its own examples and coverage cases still run, but random cases of that shape are the other
operation's already."""

TXID = "fuzz" + "A" * 16 + "0123456789"  # 30 characters
CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"
RECEIVER_HOST = "receiver.invalid"


@dataclass(frozen=True)
class Seed:
    headers: dict[str, str]
    """Bearer token and the certificate it is bound to."""
    examples: dict[str, list[Any]]
    """Values of path parameters that name the seeded objects."""


@pytest.fixture
def reserved_port() -> Iterator[int]:
    """A loopback port bound and never listened on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No webhook leaves the machine: every host but the seeded receiver is refused."""

    async def resolve(host: str, port: int) -> list[str]:
        if host == RECEIVER_HOST:
            return ["127.0.0.1"]
        raise UnsafeWebhookDestination(f"{host} does not resolve (fuzz sweep)")

    monkeypatch.setattr(transport, "resolve", resolve)


@pytest.fixture
async def seed(
    rt: Runtime, client: httpx.AsyncClient, reserved_port: int, loopback_only: None
) -> Seed:
    """One account with a cob, a paid and an open cash-in charge, a cash-out, a PIX received,
    a sandbox DICT key and two webhook URLs, and another account holding the DICT key of the
    documented examples, all made through the API."""
    rt.settings = rt.settings.model_copy(
        update={
            "allow_insecure_webhooks": True,  # the seeded receiver is http on loopback
            "webhook_api_enabled": True,  # so POST/GET /api/webhooks reach the database
            "token_rate_limit": "100000/minute",  # so token requests reach the credential checks
        }
    )
    account = await make_account(rt, balance="100000")
    headers = await bearer(client, account)
    receiver = f"http://{RECEIVER_HOST}:{reserved_port}/hook"
    payer = {"name": "Pagador", "document": CPF}

    async def post(path: str, body: dict[str, Any], **extra: str) -> dict[str, Any]:
        response = await client.post(path, json=body, headers={**headers, **extra})
        assert response.status_code in (200, 201), response.text
        result: dict[str, Any] = response.json()
        return result

    for event_type in ("cash_in", "cash_out"):
        await post("/api/webhooks", {"url": receiver, "eventType": event_type})
    cob = await client.put(
        f"/cob/{TXID}",
        headers=headers,
        json={
            "calendario": {"expiracao": 86400},
            "valor": {"original": "10.00"},
            "devedor": {"cpf": CPF, "nome": "Fulano"},
        },
    )
    assert cob.status_code == 201, cob.text

    def cash_in(external_id: str) -> dict[str, Any]:
        return {
            "transaction": {"value": 25, "description": "fuzz", "externalId": external_id},
            "payer": {"fullName": "Fulano", "document": CPF},
        }

    paid = await post("/api/pix/cash-in", cash_in("fuzz-paid"))
    await post("/api/pix/cash-in", cash_in("fuzz-open"))
    await post("/sandbox/pix/pay", {"pixCode": paid["pixCode"], "payer": payer})
    received = await post("/sandbox/pix/incoming", {"value": 5, "payer": payer})
    sent = await post(
        "/api/pix/cash-out",
        {
            "value": 3,
            "externalId": "fuzz-out",
            "description": "fuzz",
            "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
        },
    )
    await drain(rt)  # the cash-out settled, so its refund-out can be answered 201
    key = {
        "keyType": "EMAIL",
        "name": "Fulano",
        "document": CPF,
        "ispb": "60701190",
        "bankName": "Banco",
        "branch": "0001",
        "accountNumber": "1",
    }
    await post("/sandbox/dict/keys", {**key, "key": "fuzz@example.com"})
    # The documented example key belongs to someone else: registering it again is a 409,
    # and a transfer to it reaches the DICT and another account.
    other = await bearer(client, await make_account(rt, name="Outra Loja"))
    registered = await client.post(
        "/sandbox/dict/keys", headers=other, json={**key, "key": "maria@example.com"}
    )
    assert registered.status_code == 201, registered.text
    async with rt.db.connection() as conn:
        locations = [
            r["location_token"]
            for r in await conn.fetch("SELECT location_token FROM charges ORDER BY id")
        ]
        event = await conn.fetchval("SELECT min(id) FROM events")
    return Seed(
        headers=headers,
        examples={
            "txid": [TXID],
            "token": locations,
            "pixKey": [EVP],
            "e2eid": [received["endToEndId"]],
            "transactionId": [sent["transactionId"]],
            "transactionIdentifier": [
                received["transactionId"],
                sent["transactionId"],
                "fuzz-out",
                f"evt_{event}",
            ],
        },
    )


def with_examples(document: dict[str, Any], seed: Seed) -> dict[str, Any]:
    """The document with the seeded objects as examples of the parameters that name them,
    so the explicit-examples phase looks up objects that exist (the rest is generated)."""
    for operations in document["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                values = seed.examples.get(parameter["name"])
                if values:
                    parameter["examples"] = {
                        f"seeded{i}": {"value": value} for i, value in enumerate(values)
                    }
    return document


@pytest.fixture
def api_schema(rt: Runtime, seed: Seed) -> Iterator[schemathesis.BaseSchema]:
    app = create_app(rt.settings)  # its own runtime, started by schemathesis' ASGI client
    document = with_examples(app.openapi(), seed)
    loaded = schemathesis.openapi.from_dict(document)
    loaded.app = app
    fields = body_fields(document)

    @loaded.hook
    def flatmap_body(context: HookContext, body: Any) -> SearchStrategy[Any]:
        """Amounts across their range and names in any script (`fuzz_fields`)."""
        assert context.operation is not None
        operation = (context.operation.method.upper(), context.operation.path)
        return refill(body, fields.get(operation, {}))

    yield loaded
    asgi.shutdown_lifespans()  # closes that runtime's pool before the next test empties the DB


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    """schemathesis 4.32's lazy schemas rename the running test through `node._nodeid`, which
    pytest 9.2 no longer has (it keeps `_id`); the attribute it reads is provided here."""
    request.node._nodeid = request.node.nodeid


def provider_unavailable_by_design(case: schemathesis.Case, response: Any) -> bool:
    """`X-Sandbox-Scenario: PROVIDER_UNAVAILABLE` (case-insensitive, as the sandbox reads it)
    asks for the 500 the spec gives a provider that cannot be reached. On the
    operations that take the header, that one answer is not a server error to report; its
    status and body are still checked."""
    value = (case.headers or {}).get("x-sandbox-scenario") or ""
    return response.status_code == 500 and value.strip().upper() == "PROVIDER_UNAVAILABLE"


def _shape(operation: dict[str, Any]) -> str:
    """What schemathesis generates an operation's requests from: its parameters and body."""
    return json.dumps(
        [operation.get("parameters", []), operation.get("requestBody")], sort_keys=True
    )


@cache
def shared_shapes() -> frozenset[tuple[str, str]]:
    """(METHOD, path) of each operation whose shape an operation before it in the document
    has."""
    seen: set[str] = set()
    repeated: set[tuple[str, str]] = set()
    for path, item in create_app(Settings()).openapi()["paths"].items():
        for method, operation in item.items():
            shape = _shape(operation)
            if shape in seen:
                repeated.add((method.upper(), path))
            seen.add(shape)
    return frozenset(repeated)


def has_shared_shape(context: Any) -> bool:
    operation = context.operation
    return (operation.method.upper(), operation.path) in shared_shapes()


def check(case: schemathesis.Case, seed: Seed) -> None:
    response = case.call(headers=seed.headers)
    excluded = [not_a_server_error] if provider_unavailable_by_design(case, response) else []
    case.validate_response(response, checks=CHECKS, excluded_checks=excluded, headers=seed.headers)


def sweep(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@schema.exclude(has_shared_shape).parametrize()
@sweep(MAX_EXAMPLES)
def test_every_operation_answers_as_documented(case: schemathesis.Case, seed: Seed) -> None:
    check(case, seed)


@schema.include(has_shared_shape).parametrize()
@sweep(SHARED_SHAPE_EXAMPLES)
def test_every_operation_of_a_shared_shape_answers_as_documented(
    case: schemathesis.Case, seed: Seed
) -> None:
    check(case, seed)


def test_each_shared_shape_is_fuzzed_fully_on_another_operation(rt: Runtime) -> None:
    """An operation given fewer cases has the shape of one given every case."""
    paths = create_app(rt.settings).openapi()["paths"]
    shapes = {
        (method.upper(), path): _shape(operation)
        for path, item in paths.items()
        for method, operation in item.items()
    }
    full = {shape for operation, shape in shapes.items() if operation not in shared_shapes()}
    assert shared_shapes(), "no operation shares a shape"
    assert [op for op in shared_shapes() if shapes[op] not in full] == []


def test_the_sweep_sees_every_operation(rt: Runtime) -> None:
    """Every route but the HTML pages (/docs, the dashboard) is in the document the sweep
    reads: none escapes it."""
    app = create_app(rt.settings)
    operations = {
        (method, path) for path, item in app.openapi()["paths"].items() for method in item
    }
    routes = {
        (method.lower(), route.path_format)
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute) and route.include_in_schema
        for method in route.methods or ()
    }
    assert routes == operations


def test_the_sweep_fills_every_amount_and_name(rt: Runtime) -> None:
    """The fields `fuzz_fields` finds in the document, where its strategies go."""
    found = {
        (method, path, ".".join(field))
        for (method, path), fields in body_fields(create_app(rt.settings).openapi()).items()
        for field in fields
    }
    assert found == {
        ("POST", "/api/pix/cash-in", "transaction.value"),
        ("POST", "/api/pix/cash-in", "splits.*.value"),
        ("POST", "/api/pix/cash-in", "payer.fullName"),
        ("POST", "/api/pix/cash-in", "splits.*.name"),
        ("POST", "/api/pix/cash-out", "value"),
        ("POST", "/api/pix/cash-out", "details.name"),
        ("POST", "/api/pix/cash-out-qrcode", "value"),
        ("POST", "/api/pix/cash-out-qrcode", "name"),
        ("POST", "/api/pix/refund-in/{id}", "refundValue"),
        ("POST", "/dict/pix", "payment.amount"),
        ("PUT", "/cob/{txid}", "valor.original"),
        ("PUT", "/cob/{txid}", "devedor.nome"),
        ("PUT", "/cob/{txid}", "infoAdicionais.*.nome"),
        ("PATCH", "/cob/{txid}", "valor.original"),
        ("PATCH", "/cob/{txid}", "devedor.nome"),
        ("PATCH", "/cob/{txid}", "infoAdicionais.*.nome"),
        ("PUT", "/pix/{e2eid}/devolucao/{id}", "valor"),
        *(
            (method, path, field)
            for method, path in [
                ("PUT", "/api/v2/cob/{txid}"),
                ("POST", "/api/v2/cob"),
                ("PATCH", "/api/v2/cob/{txid}"),
            ]
            for field in ("valor.original", "devedor.nome", "infoAdicionais.*.nome")
        ),
        ("PUT", "/api/v2/pix/{e2eid}/devolucao/{id}", "valor"),
        ("POST", "/sandbox/dict/keys", "name"),
        ("POST", "/sandbox/pix/pay", "payer.name"),
        ("POST", "/sandbox/pix/incoming", "value"),
        ("POST", "/sandbox/pix/incoming", "payer.name"),
        ("POST", "/sandbox/pix/{transactionId}/refund-out", "value"),
    }
