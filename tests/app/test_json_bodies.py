"""JSON bodies are read one way on every route: numbers exactly, NaN refused, the shape bounded
by the screen before authentication, and a validation answer that lists a few problems and
counts the rest."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from pixgate.core.http.errors import MAX_VIOLATIONS
from pixgate.core.http.intake import json_body
from pixgate.core.http.intake.routing import PixgateRoute
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account

CASH_OUT = "/api/pix/cash-out"


def cash_out_text(value: str) -> str:
    """A cash-out body with `value` spelled exactly as given (a JSON number, not re-encoded)."""
    details = {"key": "a@b.com", "keyType": "EMAIL", "name": "Maria", "document": "52998224725"}
    return f'{{"value": {value}, "externalId": "x-1", "details": {json.dumps(details)}}}'


def test_every_route_reads_json_bodies_exactly(app: FastAPI) -> None:
    routes = [context.original_route for context in iter_route_contexts(app.routes)]
    operations = [route for route in routes if isinstance(route, APIRoute)]
    assert len(operations) > 20
    assert [r.path for r in operations if not isinstance(r, PixgateRoute)] == []


async def test_a_number_is_read_as_written_not_through_a_float(
    client: httpx.AsyncClient, rt: Runtime
) -> None:
    """1.0000000000000000000001 is 1.0 as a float; read exactly, it has too many places."""
    account = await make_account(rt, balance="100")
    headers = await bearer(client, account) | {"Content-Type": "application/json"}
    response = await client.post(
        CASH_OUT, content=cash_out_text("1.0000000000000000000001"), headers=headers
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "PIX_INVALID_AMOUNT"
    accepted = await client.post(CASH_OUT, content=cash_out_text("1.00"), headers=headers)
    assert accepted.status_code == 201, accepted.text


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_malformed_json(
    client: httpx.AsyncClient, rt: Runtime, constant: str
) -> None:
    account = await make_account(rt, balance="100")
    headers = await bearer(client, account) | {"Content-Type": "application/json"}
    response = await client.post(CASH_OUT, content=cash_out_text(constant), headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == ["body: malformed JSON"]


async def test_the_screen_answers_before_authentication(client: httpx.AsyncClient) -> None:
    too_many = {f"k{i}": 0 for i in range(json_body.MAX_MEMBERS + 1)}
    response = await client.post(CASH_OUT, json={"details": too_many})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [
        f"details: an object may have at most {json_body.MAX_MEMBERS} members"
    ]
    deep: list[object] = []
    for _ in range(json_body.MAX_DEPTH):
        deep = [deep]
    response = await client.post(CASH_OUT, json={"details": deep})
    assert response.status_code == 400, response.text
    (message,) = response.json()["message"]
    assert message.endswith(f"nested deeper than {json_body.MAX_DEPTH} levels")


async def test_a_validation_answer_lists_the_first_problems_and_counts_the_rest(
    client: httpx.AsyncClient, rt: Runtime
) -> None:
    account = await make_account(rt)
    headers = await bearer(client, account)
    long_key = "k" * 3000
    unknown = {f"{long_key}{i}": 0 for i in range(json_body.MAX_MEMBERS)}
    response = await client.post(CASH_OUT, json=unknown, headers=headers)
    assert response.status_code == 400, response.text
    messages = response.json()["message"]
    assert len(messages) == MAX_VIOLATIONS + 1
    hidden = json_body.MAX_MEMBERS + 3 - MAX_VIOLATIONS  # + value, externalId, details missing
    assert messages[-1] == f"body: {hidden} more problems not listed"
    assert all(len(message) < 200 for message in messages)
    assert len(response.content) < 4096


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"a": {"b": [1, {"c": "x\x00"}]}}, "a.b.1.c: must not contain the NUL character"),
        ({"a": {"b\x00": 1}}, "a.b\\u0000: must not contain the NUL character"),
        ({"\x00": 1}, "\\u0000: must not contain the NUL character"),
        ("\x00", "body: must not contain the NUL character"),
        ({"k" * 1000: "\x00"}, "k" * json_body.SHOWN_KEY_CHARS + "…: must not contain"),
        ({"a": [{str(i): 1 for i in range(300)}]}, "a.0: an object may have at most 256"),
        ({str(i): 1 for i in range(300)}, "body: an object may have at most 256"),
        ([[[]]], None),
        ({"a": [{"b": {}}] * 3, "n": 1.5, "t": True}, None),
    ],
)
def test_first_problem(document: object, problem: str | None) -> None:
    found = json_body.first_problem(document)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem), found
