"""The OpenAPI document, amended in one pass so it says what the routes really do.

FastAPI derives each operation from its signature; what it cannot see is added here, from the
same facts the request pipeline uses, never per endpoint:

- security: `Authorization: Bearer` plus the bound certificate in `X-SSL-Client-Cert`, on
  every operation whose dependencies authenticate (`deps.authenticates`), and nowhere
  else (token, charge-location and operations routes), so "Try it out" works in /docs;
- error responses: every 4xx/5xx of an operation has its family's model (`errors.ERROR_MODELS`,
  the one `errors.render` answers with; `application/problem+json` in the API Pix, whose
  unauthenticated call is its 403); 400 on every operation (a field error, or U+0000 in
  any text, `core.http.intake.screen`), 401 where the caller authenticates, 403 where it needs a
  scope (`deps.granted`, the scope named), 404 where an API Pix path names an object, 413
  and 415 where a body is read, 404 on sandbox routes (absent outside sandbox mode), 500
  where the provider can be unreachable (the operations that take `X-Sandbox-Scenario`),
  503 with `Retry-After` where the database is used (the operations that take the runtime
  or a caller, but the published keys, kept in memory); a route that declares a 503 of its own lists
  every code of it;
- FastAPI's default 422 `HTTPValidationError` is dropped: validation answers 400 here (a 422
  stays only where a route declares a real one);
- parameters are never `null` (a query or header is absent instead), so their schemas are
  the plain type.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, routing
from fastapi.routing import APIRoute

from pixgate.accounts.routes import deps
from pixgate.core.http import problems
from pixgate.core.http.errors import ERROR_MODELS, Family
from pixgate.core.http.intake.routing import dependency_calls

SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "`access_token` of POST /api/auth/token (1800 s by default).",
    },
    "clientCertificate": {
        "type": "apiKey",
        "in": "header",
        "name": "X-SSL-Client-Cert",
        "description": "The client certificate the token was issued for: its PEM, "
        "percent-encoded (RFC 3986) as nginx's `$ssl_client_escaped_cert` sends it. Behind "
        "the shipped nginx front it is set from the TLS handshake, never by the client.",
    },
}
AUTHENTICATED: list[dict[str, list[str]]] = [{"bearerAuth": [], "clientCertificate": []}]
_ERROR_NAMES = {None, "HTTPValidationError", *(m.__name__ for m in ERROR_MODELS.values())}

_ADDED: dict[str, str] = {
    "400": "Invalid request: a field error (`message` lists each one), or U+0000 in any "
    "text, which nothing can store.",
    "401": "Missing, invalid, expired or revoked token, or a request without the certificate "
    "the token is bound to, or with that certificate outside its validity dates.",
    "403": "AcessoNegado: a missing, invalid, expired or revoked token, a request without the "
    "certificate the token is bound to, or a token without the operation's scope.",
    "404": "Not found; sandbox routes do not exist outside sandbox mode.",
    "413": "The request body is larger than the limit (1 MiB by default).",
    "415": "The body is not `application/json`.",
    "500": "The payment provider could not be reached (sandbox: `X-Sandbox-Scenario: "
    "PROVIDER_UNAVAILABLE`); retry.",
    "503": "Error codes: SERVICE_UNAVAILABLE. The database cannot be reached; send the same "
    "request again after `Retry-After` seconds.",
}
_NOT_FOUND = "NaoEncontrado: the account has no such object."
_FORBIDDEN = "The access token was issued for other scopes; this operation needs "
_HEADERS: dict[str, dict[str, Any]] = {
    "401": {"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}},
    "429": {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}},
    "503": {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}},
}
# Operations that take the runtime but never reach the database.
_NO_DATABASE = {"/.well-known/jwks.json", "/.well-known/pix-jwks.json"}


def install(app: FastAPI) -> None:
    """Replace `app.openapi` by one that amends FastAPI's document once, then caches it."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            amend(app, generate())
        assert app.openapi_schema is not None
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def amend(app: FastAPI, document: dict[str, Any]) -> None:
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for model in ERROR_MODELS.values():
        schemas.setdefault(
            model.__name__, model.model_json_schema(ref_template="#/components/schemas/{model}")
        )
    components["securitySchemes"] = SECURITY_SCHEMES
    for route in routing.iter_route_contexts(app.routes):
        if isinstance(route.original_route, APIRoute) and route.include_in_schema:
            for method in route.methods or ():
                _amend_operation(route, document["paths"][route.path_format][method.lower()])
    callbacks = [
        path_item
        for item in document["paths"].values()
        for operation in item.values()
        for callback in operation.get("callbacks", {}).values()
        for path_item in callback.values()
    ]
    for receiver in [*document.get("webhooks", {}).values(), *callbacks]:
        for operation in receiver.values():
            if _schema_name(operation["responses"].get("422")) == "HTTPValidationError":
                del operation["responses"]["422"]  # receivers are the integrator's to write
    text = repr(document["paths"]) + repr(document.get("webhooks"))
    for unused in ("HTTPValidationError", "ValidationError"):
        if f"#/components/schemas/{unused}'" not in text:
            schemas.pop(unused, None)


def _amend_operation(route: routing.RouteContext, operation: dict[str, Any]) -> None:
    calls = set(dependency_calls(route.dependant))
    family: Family = getattr(route.original_route, "family", Family.GENERAL)
    responses: dict[str, Any] = operation.setdefault("responses", {})
    if _schema_name(responses.get("422")) == "HTTPValidationError":
        del responses["422"]
    wanted = ["400"]
    if any(deps.authenticates(call) for call in calls):
        operation["security"] = AUTHENTICATED
        wanted.append("403" if family is Family.API_PIX else "401")
    if deps.sandbox_only in calls:
        wanted.append("404")
    if family is Family.API_PIX and "{" in (route.path_format or ""):
        responses.setdefault("404", {"description": _NOT_FOUND})
    if any(deps.takes_scenario(call) for call in calls):
        wanted.append("500")
        operation.setdefault("parameters", []).append(dict(deps.SCENARIO_PARAMETER))
    uses_database = deps.get_runtime in calls or any(deps.authenticates(c) for c in calls)
    if uses_database and route.path_format not in _NO_DATABASE:
        wanted.append("503")
    if route.body_field is not None or "requestBody" in operation:
        wanted.append("413")
        if getattr(route.original_route, "form_body_bytes", None) is None:
            wanted.append("415")
    for status in wanted:
        responses.setdefault(status, {"description": _ADDED[status]})
    for scope in sorted(c.scope for c in calls if isinstance(c, deps.ScopeCheck)):
        responses.setdefault("403", {"description": _FORBIDDEN + f"`{scope}`."})
    error = {"$ref": f"#/components/schemas/{ERROR_MODELS[family].__name__}"}
    media = problems.MEDIA_TYPE if family is Family.API_PIX else "application/json"
    for status, response in responses.items():
        # An answer of its own (readyz's 503) keeps its schema; error bodies are the family's.
        if status[0] in "45" and _schema_name(response) in _ERROR_NAMES:
            response["content"] = {media: {"schema": error}}
            if status in _HEADERS:
                response["headers"] = _HEADERS[status]
    operation["responses"] = dict(sorted(responses.items()))
    for parameter in operation.get("parameters", []):
        parameter["schema"] = _not_null(parameter["schema"])


def _schema_name(response: dict[str, Any] | None) -> str | None:
    """The component a response's JSON body refers to; None when it declares no body."""
    content = (response or {}).get("content", {})
    body = content.get("application/json") or content.get(problems.MEDIA_TYPE) or {}
    schema = body.get("schema")
    if not schema:
        return None
    return str(schema.get("$ref", "")).rsplit("/", 1)[-1]


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, {type: null}]` as X (keeping title, description and default)."""
    options = schema.get("anyOf")
    if not options:
        return schema
    kept = [option for option in options if option != {"type": "null"}]
    if len(kept) == len(options):
        return schema
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    if len(kept) == 1:
        return {**kept[0], **rest}
    return {"anyOf": kept, **rest}
