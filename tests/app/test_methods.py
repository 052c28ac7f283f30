"""A 405 names in `Allow` every method its path answers, for every path of the app."""

from __future__ import annotations

import re

import httpx
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts

from tests.helpers import SIMPLE_BODY, assert_general_error

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def declared_methods(app: FastAPI) -> dict[str, set[str]]:
    """Each path template of the app and the methods its routes declare, together."""
    by_path: dict[str, set[str]] = {}
    for route in iter_route_contexts(app.routes):
        if route.methods and route.path_format:
            by_path.setdefault(route.path_format, set()).update(route.methods)
    return by_path


def concrete(path_format: str) -> str:
    """The template with a value no literal path of the app uses in each parameter."""
    return re.sub(r"\{[^}]+\}", "zz-any", path_format)


def allowed(response: httpx.Response) -> set[str]:
    return {method.strip() for method in response.headers["allow"].split(",")}


async def test_every_path_allows_the_methods_of_all_its_routes(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    paths = declared_methods(app)
    assert len(paths) > 40 and paths["/cob/{txid}"] == {"GET", "PUT", "PATCH"}
    wrong = {}
    for template, methods in paths.items():
        for method in sorted(set(METHODS) - methods):
            response = await client.request(method, concrete(template))
            if response.status_code != 405 or allowed(response) != methods:
                wrong[f"{method} {template}"] = (response.status_code, response.headers)
    assert wrong == {}


async def test_options_on_a_charge_names_its_three_methods_in_its_family(
    client: httpx.AsyncClient,
) -> None:
    response = await client.options("/cob/x")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, PATCH, PUT"
    assert set(response.json()) == SIMPLE_BODY


async def test_a_path_with_one_route_per_method_in_the_general_envelope(
    client: httpx.AsyncClient,
) -> None:
    response = await client.delete("/api/webhooks")
    assert_general_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "GET, POST"


async def test_a_dashboard_page_does_not_allow_its_catch_all_404_method(
    client: httpx.AsyncClient,
) -> None:
    """Under /dashboard a 404 page answers GET at every other address; a path with routes of
    its own allows theirs only."""
    assert (await client.delete("/dashboard/logout")).headers["allow"] == "POST"
    assert (await client.delete("/dashboard/no-such-page")).headers["allow"] == "GET"


async def test_static_files_keep_the_methods_they_answer(client: httpx.AsyncClient) -> None:
    response = await client.delete("/dashboard/static/dashboard.css")
    assert response.status_code == 405
    assert allowed(response) == {"GET", "HEAD"}
