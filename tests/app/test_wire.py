"""One wire layer: the JSON routes answer models on the `ApiModel` base (camelCase through
its alias generator), never dicts, and every feature's services return domain objects: they
do not spell the camelCase keys of HTTP answers."""

from __future__ import annotations

import ast
import inspect
import re
import typing
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from pydantic import BaseModel, RootModel

from pixgate.core.http.schemas import ApiModel
from pixgate.dashboard.routes import pages as dashboard
from pixgate.dashboard.routes import webhooks as dashboard_webhooks
from pixgate.routers import ROUTERS

PACKAGE = Path(__file__).resolve().parents[2] / "pixgate"
SERVICES = sorted([*PACKAGE.glob("*/service.py"), *PACKAGE.glob("*/service/**/*.py")])
"""Every feature's service layer: a `service.py` module or a `service/` folder."""

HTML_ROUTERS = {id(dashboard.router), id(dashboard_webhooks.router)}
"""The dashboard renders HTML pages (templates), out of the wire layer."""

DICT_ROUTES_ALLOWED = {
    "/healthz": "the baseline of bench/read.py (a trivial JSON route behind the same "
    "middleware): answering a model there would move the denominator of every ratio",
}

JSON_ROUTES = [
    route
    for router in ROUTERS
    if id(router) not in HTML_ROUTERS
    for route in router.routes
    if isinstance(route, APIRoute)
]


def _name(route: APIRoute) -> str:
    return f"{','.join(sorted(route.methods))} {route.path}"


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation names, at any depth (`list[X] | None`, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _nested(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    if model in seen:
        return seen
    seen.add(model)
    for field in model.model_fields.values():
        for inner in _models(field.annotation):
            _nested(inner, seen)
    return seen


def test_there_are_json_routes_to_check() -> None:
    assert len(JSON_ROUTES) > 20


@pytest.mark.parametrize("route", JSON_ROUTES, ids=_name)
def test_a_json_route_never_declares_a_dict_answer(route: APIRoute) -> None:
    answer = inspect.signature(route.endpoint, eval_str=True).return_annotation
    is_dict = answer is dict or typing.get_origin(answer) is dict
    if route.path in DICT_ROUTES_ALLOWED:
        assert is_dict, f"{_name(route)} no longer needs its place in DICT_ROUTES_ALLOWED"
        return
    assert not is_dict, f"{_name(route)} returns {answer}: return an ApiModel instead"


@pytest.mark.parametrize("route", JSON_ROUTES, ids=_name)
def test_every_response_schema_derives_from_api_model(route: APIRoute) -> None:
    declared = _models(route.response_model) + [
        model for answer in route.responses.values() for model in _models(answer.get("model"))
    ]
    found: set[type[BaseModel]] = set()
    for model in declared:
        _nested(model, found)
    # A RootModel is a union of bodies with no keys of its own; its members are checked.
    strays = sorted(m.__qualname__ for m in found if not issubclass(m, ApiModel | RootModel))
    assert not strays, f"{_name(route)} answers models outside ApiModel: {strays}"


# --- services build no camelCase JSON -------------------------------------------------------

CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$")

CAMEL_KEYS_ALLOWED = {
    # Documents stored in jsonb columns, in the key names the rows already hold (and read
    # back by the webhook payloads and the dashboard): renaming them would need a data
    # migration, and they are no HTTP answer.
    ("charges/service/cash_in.py", "create"): "charges.details and charges.body as stored",
    ("payouts/service/cash_out.py", "create"): "transactions.details as stored",
    (
        "payouts/service/cash_out_qrcode.py",
        "create",
    ): "transactions.details (the decoded QR code) as stored",
    (
        "charges/service/cob.py",
        "_body",
    ): "charges.body: the cob's request as stored (Central-Bank names)",
    ("payouts/service/dict_transfer.py", "TransferOrder.details"): "transactions.details as stored",
    ("refunds/service.py", "_create"): "transactions.details as stored",
    ("charges/service/splits.py", "_pay_out"): "transactions.details as stored",
    # The webhook payload's `extra` members (pixgate/webhooks/rules/payloads.py's wire format).
    ("charges/service/charges.py", "pay"): "the v2 payload's txId, passed to events.record",
    # A PixgateError's `details`, rendered as given by core/http/errors.py (docs/errors.md).
    ("payouts/service/external_ids.py", "_duplicate"): "DuplicateExternalId's details",
}


def _camel_dicts_in(source: str, name: str) -> set[tuple[str, str]]:
    """(file, qualified function) of each dict display or `dict(...)` call with a camelCase
    string key in `source`."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Dict) and any(
                isinstance(k, ast.Constant) and isinstance(k.value, str) and CAMEL.match(k.value)
                for k in child.keys
            ):
                found.add((name, ".".join(scope)))
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Name)
                and child.func.id == "dict"
                and any(k.arg is not None and CAMEL.match(k.arg) for k in child.keywords)
            ):
                found.add((name, ".".join(scope)))
            visit(child, scope)

    visit(ast.parse(source), ())
    return found


def _camel_dicts() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    assert SERVICES, "no service modules found: the check would see nothing"
    for path in SERVICES:
        found |= _camel_dicts_in(path.read_text(), str(path.relative_to(PACKAGE)))
    return found


def test_services_build_no_camel_case_json() -> None:
    """HTTP answers are shaped by each feature's schemas (on ApiModel); what remains in the
    services is listed in CAMEL_KEYS_ALLOWED with the reason it stays."""
    unexpected = sorted(_camel_dicts() - CAMEL_KEYS_ALLOWED.keys())
    assert not unexpected, (
        "a service builds camelCase keys: shape HTTP answers in the feature's schemas "
        f"(or justify them in CAMEL_KEYS_ALLOWED): {unexpected}"
    )


def test_the_camel_case_check_sees_what_it_looks_for() -> None:
    source = (
        "class Page:\n"
        "    def metadata(self):\n"
        "        return {'page': 1, 'hasNext': True}\n"
        "def item(row):\n"
        "    return dict(transactionId=row)\n"
        "def fine(row):\n"
        "    return {'CPF': 1, 'name': row}, dict(name=row)\n"
    )
    assert _camel_dicts_in(source, "x.py") == {("x.py", "Page.metadata"), ("x.py", "item")}
