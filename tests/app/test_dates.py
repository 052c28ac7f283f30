"""Every date and instant a request carries, in a query or a body, takes the documented ISO
8601 text only: a number is not read as seconds since the epoch, nor `20261124` as a date."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from pixgate.core.settings import Settings
from pixgate.runtime import Runtime
from tests.helpers import assert_general_error, bearer, make_account

API_PIX = Settings.model_fields["api_pix_base_path"].default
WINDOW = {"inicio": "2026-11-23T00:00:00Z", "fim": "2026-11-26T00:00:00Z"}
"""The API Pix's lists need both ends of their window (RFC 3339): the end not tested stays
this valid one."""

PATH_VALUES = {"pixKey": "52998224725"}
"""A valid value of each path parameter of the routes walked (any other is `x`)."""

NOT_ISO_TEXT: list[object] = [
    "0",
    "-1",
    "1e20",
    "99999999999999999999",
    "1700000000",
    "20261124",
    "2026-W48-2",
    "2026-11-24 10:00:00",
    " 2026-11-24",
    "2026-11-24T10:00:00+0300",
    "+02026-11-24",
    "",
]
NOT_ISO_JSON: list[object] = [0, -1, 1e20, 1700000000, "0", "20261124", "2026-11-24"]
"""In a body also JSON numbers; there a date alone is not an instant either."""


@dataclass(frozen=True, slots=True)
class DateField:
    method: str
    path: str
    name: str
    body: dict[str, Any] | None
    """The example body the field is set in; None for a query parameter."""


def _is_date(schema: dict[str, Any]) -> bool:
    return schema.get("format") in ("date", "date-time") or any(
        _is_date(option) for option in schema.get("anyOf", [])
    )


def date_fields(document: dict[str, Any]) -> list[DateField]:
    """Every date or date-time query parameter and top-level body field of every operation."""
    schemas = document["components"]["schemas"]
    found = []
    for path, operations in document["paths"].items():
        concrete = path.format_map({k: PATH_VALUES.get(k, "x") for k in _names(path)})
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query" and _is_date(parameter["schema"]):
                    found.append(DateField(method.upper(), concrete, parameter["name"], None))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None or "$ref" not in body["schema"]:
                continue
            model = schemas[body["schema"]["$ref"].rsplit("/", 1)[-1]]
            for name, schema in model.get("properties", {}).items():
                if _is_date(schema):
                    found.append(DateField(method.upper(), concrete, name, model["examples"][0]))
    return found


def _names(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


@pytest.fixture
async def headers(rt: Runtime, client: httpx.AsyncClient) -> dict[str, str]:
    return await bearer(client, await make_account(rt, balance="100.00"))


async def test_the_walk_finds_every_date_of_the_api(app: FastAPI) -> None:
    assert {(f.method, f.path, f.name) for f in date_fields(app.openapi())} == {
        ("GET", "/api/transactions", "startDate"),
        ("GET", "/api/transactions", "endDate"),
        ("GET", "/api/pix/transactions/pix-key/52998224725", "startDate"),
        ("GET", "/api/pix/transactions/pix-key/52998224725", "endDate"),
        ("GET", "/api/med", "startDate"),
        ("GET", "/api/med", "endDate"),
        ("GET", "/api/events", "startDate"),
        ("GET", "/api/events", "endDate"),
        ("POST", "/sandbox/pix/pay", "paidAt"),
        ("POST", "/sandbox/pix/incoming", "paidAt"),
        *(
            ("GET", f"{API_PIX}/{resource}", name)
            for resource in ("cob", "loc", "pix", "webhook")
            for name in ("inicio", "fim")
        ),
    }


def query(field: DateField, value: object) -> dict[str, object]:
    return {**(WINDOW if field.path.startswith(API_PIX) else {}), field.name: value}


def assert_refused_naming(field: DateField, response: httpx.Response) -> None:
    """A 400 in the route's family (an RFC 7807 problem under the API Pix) naming the field."""
    if field.path.startswith(API_PIX):
        assert response.status_code == 400, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert field.name in response.text, (field, response.text)
        return
    envelope = assert_general_error(response, 400, "HTTP_ERROR")
    assert field.name in json.dumps(envelope), (field, envelope)


async def test_anything_but_iso_8601_text_is_400_naming_the_field(
    app: FastAPI, client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    for field in date_fields(app.openapi()):
        for value in NOT_ISO_TEXT if field.body is None else NOT_ISO_JSON:
            if field.body is None:
                response = await client.request(
                    field.method, field.path, params=query(field, value), headers=headers
                )
            else:
                body = {**field.body, field.name: value}
                response = await client.request(
                    field.method, field.path, json=body, headers=headers
                )
            assert_refused_naming(field, response)


@pytest.mark.parametrize(
    "value", ["2026-11-24T10:00:00Z", "2026-11-24T10:00-03:00", "2026-11-24T10:00:00.123456+05:30"]
)
async def test_a_date_time_is_accepted_wherever_a_date_or_instant_is(
    app: FastAPI, client: httpx.AsyncClient, headers: dict[str, str], value: str
) -> None:
    for field in date_fields(app.openapi()):
        if field.body is None:
            response = await client.get(field.path, params=query(field, value), headers=headers)
            assert response.status_code == 200, (field, response.text)


async def test_a_statement_takes_a_date_time_for_its_day_in_the_gateway_s_zone(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    """01:30 UTC on the 25th is still the 24th in São Paulo: 31 days after the 24th of
    October, the longest statement; the 25th would be one day more."""
    params = {"startDate": "2026-10-24", "endDate": "2026-11-25T01:30:00Z"}
    response = await client.get("/api/transactions", params=params, headers=headers)
    assert response.status_code == 200, response.text
    params["endDate"] = "2026-11-25T03:30:00Z"
    response = await client.get("/api/transactions", params=params, headers=headers)
    assert_general_error(response, 400, "HTTP_ERROR")
