"""The OpenAPI document tells the truth: security, error bodies per family, statuses, and
request constraints that match what the services accept."""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs
import pytest
from fastapi import FastAPI
from hypothesis import given
from hypothesis import strategies as st

from pixgate.core.errors import SandboxScenarioUnknown
from pixgate.core.http.schemas import DOCUMENT_PATTERN
from pixgate.core.pix.documents import document_kind, make_cpf, only_document_chars
from pixgate.core.pix.keys import DICT_KEY_PATTERN, dict_key_type
from pixgate.sandbox import rules as scenarios
from tests.support import make_cnpj

UNAUTHENTICATED = {
    ("post", "/api/auth/token"),
    ("post", "/oauth/token"),
    ("get", "/loc/{token}"),
    ("get", "/qr/v2/{token}"),
    ("get", "/.well-known/pix-jwks.json"),
    ("get", "/.well-known/jwks.json"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
}
FAMILY_OF = {
    "/api/auth/token": "ErrorEnvelope",
    "/oauth/token": "ErrorEnvelope",
    "/api/pix/cash-in": "ErrorEnvelope",
    "/api/pix/cash-out": "ErrorEnvelope",
    "/dict/pix": "SimpleError",
    "/cob/{txid}": "SimpleError",
    "/loc/{token}": "SimpleError",
    "/qr/v2/{token}": "Problem",
    "/.well-known/pix-jwks.json": "SimpleError",
    "/accounts/balances": "SimpleError",
    "/api/balance": "SimpleError",
    "/pix/{e2eid}/devolucao/{id}": "SimpleError",
}
API_PIX = "/api/v2/"
"""The API Pix's routes (under the default base path) answer RFC 7807 problems."""
# The token endpoint refuses a JSON request in the envelope and an OAuth 2.0 form request in
# RFC 6749's error: its 400 and 401 declare either.
TOKEN_REFUSALS = {
    (path, status): "TokenError"
    for path in ("/api/auth/token", "/oauth/token")
    for status in ("400", "401")
}
SCENARIO_ROUTES = {
    ("post", "/api/pix/cash-in"),
    ("post", "/api/pix/cash-out"),
    ("post", "/api/pix/cash-out-qrcode"),
    ("post", "/dict/pix"),
    ("put", "/cob/{txid}"),
    ("post", "/api/pix/refund-in/{id}"),
    ("put", "/pix/{e2eid}/devolucao/{id}"),
    ("put", "/api/v2/pix/{e2eid}/devolucao/{id}"),
    ("put", "/api/v2/cob/{txid}"),
    ("post", "/api/v2/cob"),
}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from pixgate.app import create_app
    from pixgate.core.settings import Settings

    app: FastAPI = create_app(Settings(database_url="postgresql://unused@127.0.0.1/unused"))
    return app.openapi()


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def error_schema(response: dict[str, Any]) -> str:
    """The error body's model; the API Pix's is an RFC 7807 problem, in its own media type."""
    content = response["content"]
    body = content.get("application/json") or content["application/problem+json"]
    return str(body["schema"]["$ref"]).rsplit("/", 1)[-1]


def test_security_on_every_authenticated_operation_and_only_there(
    document: dict[str, Any],
) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {**schemes["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert schemes["clientCertificate"] == {
        **schemes["clientCertificate"],
        "type": "apiKey",
        "in": "header",
        "name": "X-SSL-Client-Cert",
    }
    for method, path, operation in operations(document):
        if (method, path) in UNAUTHENTICATED:
            assert "security" not in operation, (method, path)
            assert "401" not in operation["responses"] or path.endswith("/token")
        elif path.startswith(API_PIX):  # its unauthenticated call is the document's 403
            assert operation["security"] == [{"bearerAuth": [], "clientCertificate": []}]
            assert "401" not in operation["responses"], (method, path)
            assert error_schema(operation["responses"]["403"]) == "Problem"
        else:
            assert operation["security"] == [{"bearerAuth": [], "clientCertificate": []}]
            assert "WWW-Authenticate" in operation["responses"]["401"]["headers"]


def test_token_routes_declare_the_certificate_header(document: dict[str, Any]) -> None:
    for path in ("/api/auth/token", "/oauth/token"):
        header = document["paths"][path]["post"]["parameters"][0]
        assert header["name"] == "X-SSL-Client-Cert" and header["required"] is True


def test_error_bodies_are_the_family_model_and_no_default_422(
    document: dict[str, Any],
) -> None:
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for method, path, operation in operations(document):
        responses = operation["responses"]
        assert "400" in responses, (method, path)
        family = FAMILY_OF.get(path, "Problem" if path.startswith(API_PIX) else "ApiError")
        for status, response in responses.items():
            if status[0] in "45" and not (path == "/readyz" and status == "503"):
                expected = TOKEN_REFUSALS.get((path, status), family)
                assert error_schema(response) == expected, (method, path, status)
        if (method, path) in (
            ("post", "/dict/pix"),
            ("post", "/sandbox/pix/pay"),
            ("put", "/pix/{e2eid}/devolucao/{id}"),
        ):
            assert "422" in responses  # real business answers of these three
        else:
            assert "422" not in responses, (method, path)


def test_bodies_declare_413_and_415_and_sandbox_routes_404(document: dict[str, Any]) -> None:
    for method, path, operation in operations(document):
        responses = operation["responses"]
        if "requestBody" in operation:
            assert "413" in responses, (method, path)
            assert ("415" in responses) == (not path.endswith("/token")), (method, path)
        else:
            assert "413" not in responses and "415" not in responses, (method, path)
        assert ("404" in responses) >= path.startswith("/sandbox/"), (method, path)
        assert ("500" in responses) == ((method, path) in SCENARIO_ROUTES), (method, path)


def test_sandbox_scenarios_are_an_enum_where_the_header_is_taken(
    document: dict[str, Any],
) -> None:
    for method, path, operation in operations(document):
        headers = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "header"}
        assert ("x-sandbox-scenario" in headers) == ((method, path) in SCENARIO_ROUTES)
        if "x-sandbox-scenario" in headers:
            named, delay = headers["x-sandbox-scenario"]["schema"]["anyOf"]
            assert named["enum"] == list(scenarios.NAMED)
            assert delay["pattern"] == scenarios.DELAY_PATTERN


@pytest.mark.parametrize(
    "value",
    [
        "DELAY_0MS",
        "DELAY_1MS",
        "DELAY_000001MS",
        "DELAY_99999MS",
        "DELAY_599999MS",
        "DELAY_600000MS",
        "DELAY_600001MS",
        "DELAY_999999MS",
        "DELAY_1000000MS",
        "DELAY_MS",
    ],
)
def test_the_delay_pattern_accepts_what_the_sandbox_accepts(value: str) -> None:
    try:
        accepted = scenarios.parse(value) == value
    except SandboxScenarioUnknown:
        accepted = False
    assert accepted == bool(re.fullmatch(scenarios.DELAY_PATTERN, value))


def test_parameters_are_never_null(document: dict[str, Any]) -> None:
    for _, _, operation in operations(document):
        for parameter in operation.get("parameters", []):
            assert {"type": "null"} not in parameter["schema"].get("anyOf", []), parameter


def test_amounts_and_limits_of_section_8(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    number = {"type": "number", "minimum": 0.01, "maximum": 9999999999.99, "multipleOf": 0.01}
    string = {"type": "string", "pattern": r"^[0-9]{1,10}(\.[0-9]{1,2})?$"}
    for model, field in [
        ("CashOutRequest", "value"),
        ("CashInTransaction", "value"),
        ("QrCashOutRequest", "value"),
        ("SandboxIncomingRequest", "value"),
        ("RefundInRequest", "refundValue"),
        ("RefundOutRequest", "value"),
        ("DictPayment", "amount"),
    ]:
        assert schemas[model]["properties"][field]["anyOf"] == [number, string], model
    central_bank = {"type": "string", "pattern": r"^[0-9]{1,10}\.[0-9]{2}$"}
    for model, field in [("Valor", "original"), ("DevolucaoRequest", "valor")]:
        assert central_bank.items() <= schemas[model]["properties"][field].items(), model
    split = schemas["CashInSplit"]["properties"]["value"]["anyOf"]
    assert split == [
        {**number, "multipleOf": 0.0001},
        {"type": "string", "pattern": r"^[0-9]{1,10}(\.[0-9]{1,4})?$"},
    ]
    limits = [
        ("CashOutRequest", "description", 140),
        ("CashOutDetails", "name", 100),
        ("CashInTransaction", "description", 140),
        ("CashInPayer", "fullName", 100),
        ("CashInSplit", "pixKey", 255),
        ("CashInSplit", "name", 255),
        ("CobRequest", "chave", 77),
        ("CobRequest", "solicitacaoPagador", 140),
        ("QrCashOutRequest", "qrCode", 500),
        ("DevolucaoRequest", "descricao", 140),
    ]
    for model, field, limit in limits:
        prop = schemas[model]["properties"][field]
        found = prop.get("maxLength") or next(
            o["maxLength"] for o in prop["anyOf"] if "maxLength" in o
        )
        assert found == limit, (model, field)
    transaction = schemas["CashInTransaction"]["properties"]["expirationTime"]
    assert (transaction["minimum"], transaction["maximum"]) == (30, 604800)
    for model, field in [
        ("CashOutDetails", "document"),
        ("CashInPayer", "document"),
        ("CashInSplit", "document"),
        ("QrCashOutRequest", "document"),
        ("DictTransferRequest", "creditorDocument"),
        ("SandboxPayer", "document"),
        ("DictKeyRequest", "document"),
    ]:
        assert schemas[model]["properties"][field]["pattern"] == DOCUMENT_PATTERN, model


def test_request_examples_validate_against_their_schemas(document: dict[str, Any]) -> None:
    """The bodies /docs offers for "Try it out" (and the sweep sends first) are valid."""
    schemas = document["components"]["schemas"]
    examples = [
        (name, example)
        for name, schema in schemas.items()
        for example in schema.get("examples", [])
    ]
    for name, example in examples:
        jsonschema_rs.validator_for(_resolve(schemas[name], schemas)).validate(example)
    assert len(examples) >= 10


def _resolve(schema: Any, schemas: dict[str, Any]) -> Any:
    """The schema with every local $ref inlined (none of ours is recursive)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _resolve(schemas[schema["$ref"].rsplit("/", 1)[-1]], schemas)
        return {k: _resolve(v, schemas) for k, v in schema.items() if k != "examples"}
    if isinstance(schema, list):
        return [_resolve(item, schemas) for item in schema]
    return schema


_PUNCTUATION = st.sampled_from(["", ".", "-", "/", " ", ". "])


@st.composite
def documents(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        bare = make_cpf(draw(st.from_regex(r"[0-9]{9}", fullmatch=True)))
    else:
        bare = make_cnpj(draw(st.from_regex(r"[0-9A-Z]{12}", fullmatch=True)))
    if draw(st.booleans()):
        bare = bare.lower()
    return "".join(draw(_PUNCTUATION) + c for c in bare) + draw(_PUNCTUATION)


@given(documents())
def test_document_pattern_accepts_every_document_the_services_read(value: str) -> None:
    assert document_kind(only_document_chars(value)) is not None
    assert re.fullmatch(DOCUMENT_PATTERN, value)


@given(st.text(alphabet="0123456789ABCZabz./ -#", max_size=20))
def test_document_pattern_refuses_what_the_services_refuse(value: str) -> None:
    kind = document_kind(only_document_chars(value))
    assert (re.fullmatch(DOCUMENT_PATTERN, value) is not None) == (kind is not None)


@pytest.mark.parametrize(
    "key",
    [
        "52998224725",
        "12ABC34501DE35",
        "+5511987654321",
        "+551187654321",
        "123e4567-e12b-42d3-a456-426614174000",
        "maria@example.com",
        "a.b+c@d-e.example.co",
        "o'neil@example.com.br",
    ],
)
def test_dict_key_pattern_accepts_every_dict_key(key: str) -> None:
    assert dict_key_type(key) is not None
    assert re.fullmatch(DICT_KEY_PATTERN, key)


@given(st.text(alphabet="0123456789abcdefABZ+@.-_", max_size=40))
def test_dict_key_pattern_never_refuses_a_valid_key(key: str) -> None:
    if dict_key_type(key) is not None:
        assert re.fullmatch(DICT_KEY_PATTERN, key)


async def test_the_served_document_is_the_amended_one(app: FastAPI, client: Any) -> None:
    served = (await client.get("/openapi.json")).json()
    assert served == app.openapi()
    assert "securitySchemes" in served["components"]


def test_operations_that_use_the_database_declare_503_with_retry_after(
    document: dict[str, Any],
) -> None:
    in_memory = {"/healthz", "/metrics", "/.well-known/jwks.json", "/.well-known/pix-jwks.json"}
    for method, path, operation in operations(document):
        declared = operation["responses"].get("503")
        if path in in_memory:
            assert declared is None, (method, path)
        else:
            assert declared is not None, (method, path)
            assert "Retry-After" in declared["headers"], (method, path)
