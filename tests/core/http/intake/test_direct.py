"""An operation called directly (`DirectCall`) answers every request as FastAPI's own pass
does, and only the routes whose inputs it can resolve are called so."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import fastapi.routing
import httpx
import pytest
from fastapi import Depends, FastAPI, Form, Header, Query, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel

from pixgate.core.http.intake.direct import DirectCall
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account

CASH_OUT = "/api/pix/cash-out"
DETAILS = {"key": "a@b.com", "keyType": "EMAIL", "name": "Maria", "document": "52998224725"}


def route_of(app: FastAPI, method: str, path: str) -> APIRoute:
    return next(
        r
        for r in app.router.routes
        if isinstance(r, APIRoute) and r.path == path and method in (r.methods or ())
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", CASH_OUT),
        ("POST", "/api/pix/cash-out-qrcode"),
        ("GET", "/accounts/balances"),
        ("GET", "/api/balance"),
    ],
)
def test_the_hot_operations_are_called_directly(app: FastAPI, method: str, path: str) -> None:
    assert DirectCall.of(route_of(app, method, path)) is not None


class Order(BaseModel):
    value: int


async def caller(request: Request) -> str:
    return request.url.path


async def with_header(x_thing: Annotated[str, Header()]) -> str:
    return x_thing


async def held(request: Request) -> AsyncIterator[str]:
    yield request.url.path


def sync_caller(request: Request) -> str:
    return request.url.path


def answered(endpoint: Callable[..., Any]) -> APIRoute:
    router = fastapi.APIRouter(route_class=PixgateRoute)
    router.add_api_route("/x", endpoint, methods=["POST"])
    route = router.routes[0]
    assert isinstance(route, APIRoute)
    return route


async def direct(order: Order, who: Annotated[str, Depends(caller)]) -> JSONResponse:
    return JSONResponse({"value": order.value, "who": who})


async def query(order: Order, n: Annotated[int, Query()]) -> JSONResponse:
    return JSONResponse({})


async def header_dependency(who: Annotated[str, Depends(with_header)]) -> JSONResponse:
    return JSONResponse({})


async def yield_dependency(who: Annotated[str, Depends(held)]) -> JSONResponse:
    return JSONResponse({})


async def thread_dependency(who: Annotated[str, Depends(sync_caller)]) -> JSONResponse:
    return JSONResponse({})


async def model_answer(order: Order) -> Order:
    return order


async def form_body(value: Annotated[int, Form()]) -> JSONResponse:
    return JSONResponse({})


async def two_bodies(order: Order, other: Order) -> JSONResponse:
    return JSONResponse({})


async def takes_request(order: Order, request: Request) -> JSONResponse:
    return JSONResponse({})


def test_a_route_of_request_dependencies_and_a_json_body_is_called_directly() -> None:
    assert DirectCall.of(answered(direct)) is not None


@pytest.mark.parametrize(
    "endpoint",
    [
        query,
        header_dependency,
        yield_dependency,
        thread_dependency,
        model_answer,
        form_body,
        two_bodies,
        takes_request,
    ],
)
def test_any_other_input_is_left_to_fastapi(endpoint: Callable[..., Any]) -> None:
    assert DirectCall.of(answered(endpoint)) is None


ran: list[int] = []
"""The values `lying` was called with."""


async def lying(order: Order) -> JSONResponse:
    """Declared to answer a Response; answers a dict, as a bug would."""
    ran.append(order.value)
    return {"value": order.value}  # type: ignore[return-value]


async def test_an_endpoint_that_breaks_its_declaration_is_an_error_not_a_second_run() -> None:
    """Handing its answer on to FastAPI would run the operation twice."""
    app = FastAPI()
    app.router.routes.append(answered(lying))
    transport = httpx.ASGITransport(app=app)
    ran.clear()
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with pytest.raises(TypeError, match="declared to answer a Response"):
            await client.post("/x", json={"value": 7})
    assert ran == [7]


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The paths FastAPI's own parameter pass ran for."""
    calls: list[str] = []
    solve = fastapi.routing.solve_dependencies

    async def counted(*, request: Request, **kwargs: Any) -> Any:
        calls.append(request.url.path)
        return await solve(request=request, **kwargs)

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", counted)
    yield calls


async def test_a_valid_cash_out_skips_fastapis_pass_and_a_refused_one_takes_it(
    client: httpx.AsyncClient, rt: Runtime, solves: list[str]
) -> None:
    account = await make_account(rt, balance="100")
    headers = await bearer(client, account)
    solves.clear()
    body = {"value": 1.5, "externalId": "direct-1", "details": DETAILS}
    accepted = await client.post(CASH_OUT, json=body, headers=headers)
    assert accepted.status_code == 201, accepted.text
    assert solves == []
    refused = await client.post(CASH_OUT, json={**body, "value": "x"}, headers=headers)
    assert refused.status_code == 400, refused.text
    assert solves == [CASH_OUT]


def _cases(token: dict[str, str]) -> list[tuple[str, str, dict[str, str], bytes]]:
    """(method, path, headers, body): what either path must answer alike."""
    json_type = {"Content-Type": "application/json"}
    auth = token | json_type

    numbers = itertools.count()

    def order(**changes: Any) -> bytes:
        """An order of its own externalId: the same on both paths, which use two accounts."""
        external_id = f"alike-{next(numbers)}"
        return json.dumps({"externalId": external_id, "details": DETAILS, **changes}).encode()

    return [
        ("POST", CASH_OUT, auth, order(value="x")),
        ("POST", CASH_OUT, auth, order(value=0.001)),
        ("POST", CASH_OUT, auth, order(value=1, details={"key": "a@b.com"})),
        ("POST", CASH_OUT, auth, order(value=1, surprise=True)),
        ("POST", CASH_OUT, auth, b"[]"),
        ("POST", CASH_OUT, auth, b"null"),
        ("POST", CASH_OUT, auth, b'"text"'),
        ("POST", CASH_OUT, auth, b"{"),
        ("POST", CASH_OUT, token, order(value=1)),
        ("POST", CASH_OUT, token | {"Content-Type": "text/plain"}, order(value=1)),
        ("POST", CASH_OUT, token | {"Content-Type": "application/x+json"}, order(value=1)),
        ("POST", CASH_OUT, json_type, order(value=1)),
        ("POST", CASH_OUT, json_type, order(value="x")),
        ("POST", CASH_OUT, auth | {"Authorization": "Bearer nope"}, order(value=1)),
        ("POST", CASH_OUT, auth | {"X-Sandbox-Scenario": "NOT_A_SCENARIO"}, order(value=1)),
        ("POST", CASH_OUT, auth, order(value=10**9)),
        ("POST", CASH_OUT, auth, order(value=1)),
        ("GET", "/accounts/balances", token, b""),
        ("GET", "/accounts/balances", {}, b""),
        ("GET", "/api/balance", token, b""),
    ]


UNIQUE = {"transactionId", "generateTime", "timestamp", "errorId", "eventDate", "consultedAt"}
"""What differs from one answer to the next whatever the path: ids and times."""


def _without_unique(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_unique(v) for k, v in value.items() if k not in UNIQUE}
    if isinstance(value, list):
        return [_without_unique(v) for v in value]
    return value


def _comparable(response: httpx.Response) -> tuple[int, Any]:
    return response.status_code, _without_unique(response.json())


async def test_either_path_gives_every_answer_alike(
    app: FastAPI, client: httpx.AsyncClient, rt: Runtime
) -> None:
    """Each request is sent on the direct path, then (an override in place, which turns the
    direct calls off) on FastAPI's, to two accounts alike: the same status and body."""
    accounts = [await make_account(rt, balance="100") for _ in range(2)]
    tokens = [await bearer(client, account) for account in accounts]
    answers: list[list[tuple[int, Any]]] = []
    for token, overridden in zip(tokens, (False, True), strict=True):
        if overridden:
            app.dependency_overrides[caller] = caller
        try:
            answers.append(
                [
                    _comparable(await client.request(method, path, headers=h, content=body))
                    for method, path, h, body in _cases(token)
                ]
            )
        finally:
            app.dependency_overrides.clear()
    direct_answers, fastapi_answers = answers
    assert direct_answers == fastapi_answers
    statuses = {status for status, _ in direct_answers}
    assert {200, 201, 400, 401, 415} <= statuses
