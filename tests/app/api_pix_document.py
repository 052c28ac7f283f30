"""The Central Bank's API Pix document as the contract an answer of ours is checked against.

`docs/reference/bcb-pix-api/openapi.yaml` (API Pix 2.9.0, Apache 2.0, provenance in SOURCE.md
beside it) is loaded once, with each erratum of ERRATA.md applied by a function of its own, so a
reader sees exactly where the document is corrected and where our answers are held to it as
written. `assert_conforms` checks one HTTP answer against the operation it answers: a status the
operation declares, the media type it declares for that status, and a body that validates
against that status's schema (OpenAPI 3.0's schema objects are JSON Schema Draft 4 with extra
annotations, which a Draft 4 validator ignores).
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema_rs
import yaml

DOCUMENT = Path(__file__).resolve().parents[2] / "docs/reference/bcb-pix-api/openapi.yaml"
METHODS = ("get", "put", "post", "patch", "delete")
PROBLEM = "application/problem+json"

Document = dict[str, Any]


def erratum_1_regex_literal_patterns(document: Document) -> None:
    """Some patterns are regex literals (`'/^\\d{11}$/'` for a CPF): the slashes go, so the
    pattern means what its text says instead of demanding slashes around the value."""

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            pattern = node.get("pattern")
            if isinstance(pattern, str) and len(pattern) > 1 and pattern[0] == pattern[-1] == "/":
                node["pattern"] = pattern[1:-1]
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(document)


def erratum_2_pix_consultados_requires_pix(document: Document) -> None:
    """`PixConsultados.required` names `cobs`, a copy of the cob list's schema: the list the
    schema's properties and example hold is `pix`."""
    schema = document["components"]["schemas"]["PixConsultados"]
    assert schema["required"] == ["parametros", "cobs"], "erratum 2 no longer applies"
    schema["required"] = ["parametros", "pix"]


def erratum_3_webhook_requires_chave(document: Document) -> None:
    """The webhook read back (`WebhookCompleto`, titled "Webhook") requires `cnpj`: the
    example, and every PSP, answers the key the webhook is registered for, `chave`."""
    schema = document["components"]["schemas"]["WebhookCompleto"]
    assert schema["required"] == ["webhookUrl", "cnpj", "criacao"], "erratum 3 no longer applies"
    schema["required"] = ["webhookUrl", "chave", "criacao"]


ERRATA: tuple[Callable[[Document], None], ...] = (
    erratum_1_regex_literal_patterns,
    erratum_2_pix_consultados_requires_pix,
    erratum_3_webhook_requires_chave,
)
"""ERRATA.md's 4th erratum (examples that omit required members) concerns the examples only:
answers are held to the schemas, never to the examples, so it needs no correction."""


@cache
def document() -> Document:
    """The document with its errata applied (loaded once per test process)."""
    loaded: Document = yaml.load(DOCUMENT.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    for erratum in ERRATA:
        erratum(loaded)
    return loaded


def resolve(node: Any, seen: tuple[str, ...] = ()) -> Any:
    """`node` with every local `$ref` inlined and the examples left out (the document has no
    recursive reference; one would be a loop, and fails here rather than recursing forever)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            assert ref not in seen, f"recursive $ref {ref}"
            return resolve(_pointer(ref), (*seen, ref))
        return {
            key: resolve(value, seen)
            for key, value in node.items()
            if key not in ("example", "examples")
        }
    if isinstance(node, list):
        return [resolve(value, seen) for value in node]
    return node


def _pointer(ref: str) -> Any:
    assert ref.startswith("#/"), f"only local references are expected: {ref}"
    node: Any = document()
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def operations() -> Iterator[tuple[str, str]]:
    """Every operation of the document as (METHOD, path template), in the document's order."""
    for path, item in document()["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path


def template_of(method: str, path: str) -> str:
    """The document's path template a concrete request path (without the base path) is an
    operation of; of several that fit (`/cob` fits `/{pixUrlAccessToken}` too) the one with the
    most literal segments."""
    fitting = [
        template
        for verb, template in operations()
        if verb == method.upper()
        and re.fullmatch(re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template)), path)
    ]
    assert fitting, f"{method} {path} is no operation of the document"
    return max(fitting, key=lambda template: template.count("/") - template.count("{"))


def operation(method: str, path_template: str) -> dict[str, Any]:
    """The operation, resolved; its path-level parameters joined to its own."""
    item = document()["paths"].get(path_template)
    assert item is not None, f"{path_template} is not a path of the document"
    found = item.get(method.lower())
    assert found is not None, f"{method} {path_template} is not an operation of the document"
    resolved: dict[str, Any] = resolve(copy.deepcopy(found))
    resolved["parameters"] = resolve(item.get("parameters", [])) + resolved.get("parameters", [])
    return resolved


def scopes(method: str, path_template: str) -> list[str]:
    """The OAuth 2.0 scopes the operation requires (none for the public payload)."""
    return [
        scope
        for requirement in operation(method, path_template).get("security", [])
        for scope in requirement.get("OAuth2", [])
    ]


def declared_statuses(method: str, path_template: str) -> list[int]:
    return sorted(int(status) for status in operation(method, path_template)["responses"])


def uri_or_schemeless_location(value: str) -> bool:
    """`format: uri`, as the document uses it: an absolute URI (`webhookUrl`), or a location
    written without its scheme (`pix.example.com/qr/v2/...`), as every location example of the
    document shows and as the BR Code carries it (its field 26's URL has no `https://`)."""
    if any(c.isspace() for c in value):
        return False
    parts = urlsplit(value if "://" in value else "https://" + value)
    return bool(parts.scheme and parts.netloc)


@cache
def _validator(method: str, path_template: str, status: str, media_type: str) -> Any:
    content = _responses(method, path_template, int(status))[status]["content"]
    return jsonschema_rs.Draft4Validator(
        content[media_type]["schema"],
        validate_formats=True,
        formats={"uri": uri_or_schemeless_location},
    )


ERROR_TYPE_BASE = "https://pix.bcb.gov.br/api/v2/error/"
_ERROR_TYPE = re.compile(
    r"^ *### `(\w+)`\s+\* __Significado__:.*?__HTTP Status Code__: \[(\d+)", re.M | re.S
)


@cache
def error_types() -> dict[str, int]:
    """The error types the document's "Tratamento de erros" lists, with their status (the
    first one it names)."""
    found = _ERROR_TYPE.findall(document()["info"]["description"])
    return {name: int(status) for name, status in found}


@cache
def general_errors() -> dict[int, str]:
    """Its "Gerais" section: errors "que poderiam ser retornados por quaisquer endpoints", so
    an operation may answer them though its `responses` do not list them (the list queries
    declare no 400, yet `CobConsultaInvalida` and the like are theirs)."""
    description = document()["info"]["description"]
    section = description.split("## Gerais", 1)[1].split("\n## ", 1)[0]
    return {int(status): name for name, status in _ERROR_TYPE.findall(section)}


_ENDPOINTS = re.compile(r"__endpoints?__: (.*)")
_ENDPOINT = re.compile(r"`\[?([A-Z|]+)\]? (/[^`]*)`")


@cache
def endpoints_of_types() -> dict[str, frozenset[tuple[str, str]]]:
    """The operations each error type of the document names (`__endpoints__`); a general
    error names none and may come from any."""
    found: dict[str, frozenset[tuple[str, str]]] = {}
    blocks = document()["info"]["description"].split("### `")[1:]
    for block in blocks:
        name = block.split("`", 1)[0]
        line = _ENDPOINTS.search(block)
        named = _ENDPOINT.findall(line.group(1)) if line else []
        found[name] = frozenset(
            (method, path) for methods, path in named for method in methods.split("|")
        )
    erratum_5_cob_operacao_invalida_names_post_cob(found)
    return found


def erratum_5_cob_operacao_invalida_names_post_cob(
    found: dict[str, frozenset[tuple[str, str]]],
) -> None:
    """`CobOperacaoInvalida` names `[POST|PUT|PATCH] /cob/{txid}`, and POST is no operation of
    that path but of /cob, whose 400 (example `RequisicaoInvalidaCobExample1`) is that type:
    read as POST /cob. (Not in ERRATA.md, which covers the schemas; this is the prose.)"""
    assert ("POST", "/cob") not in found["CobOperacaoInvalida"], "erratum 5 no longer applies"
    found["CobOperacaoInvalida"] |= {("POST", "/cob")}


def types_for(method: str, path_template: str) -> frozenset[str]:
    """The error types an operation may answer: the ones naming it, and the general ones."""
    operation = (method.upper(), path_template)
    return frozenset(
        name for name, named in endpoints_of_types().items() if not named or operation in named
    )


def _responses(method: str, path_template: str, status: int) -> dict[str, Any]:
    responses: dict[str, Any] = operation(method, path_template)["responses"]
    if str(status) in responses:
        return responses
    if status in general_errors():
        problem = document()["components"]["schemas"]["Problema"]
        general = {"content": {PROBLEM: {"schema": resolve(problem)}}}
        return {**responses, str(status): general}
    return responses


def assert_conforms(response: httpx.Response, method: str, path_template: str) -> Any:
    """Fail unless `response` is an answer the document allows for the operation; return the
    body (the JWS payload's claims for `application/jose`). An error's `type` must be one the
    document lists."""
    where = f"{method.upper()} {path_template} answered {response.status_code}"
    responses = _responses(method, path_template, response.status_code)
    status = str(response.status_code)
    assert status in responses, f"{where}, not one of {sorted(responses)}: {response.text}"
    content = responses[status].get("content", {})
    if not content:
        assert not response.content, f"{where} with a body the document does not declare"
        return None
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    assert media_type in content, f"{where} as {media_type!r}, not {sorted(content)}"
    body = _body(response, media_type)
    errors = [
        f"{'/'.join(str(p) for p in error.instance_path) or '(body)'}: {error.message}"
        for error in _validator(method.upper(), path_template, status, media_type).iter_errors(body)
    ]
    assert not errors, f"{where} with a body the schema refuses:\n" + "\n".join(errors)
    if media_type == PROBLEM:
        kind = str(body["type"]).removeprefix(ERROR_TYPE_BASE)
        assert kind in error_types(), f"{where} with a type the document does not list: {body}"
        allowed = types_for(method, path_template)
        assert kind in allowed, f"{where} as {kind}, which the document gives other operations"
        assert body["status"] == response.status_code, f"{where} with {body}"
    return body


def _body(response: httpx.Response, media_type: str) -> Any:
    if media_type == "application/jose":
        return jws_claims(response.text)
    return json.loads(response.content)


def jws_claims(jws: str) -> Any:
    """The payload of a compact JWS (header.payload.signature), parsed as JSON."""
    parts = jws.strip().split(".")
    assert len(parts) == 3, "a compact JWS has three parts"
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    return json.loads(base64.urlsafe_b64decode(payload))
