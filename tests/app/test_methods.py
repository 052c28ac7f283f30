"""A 405 names in `Allow` every method its path answers, for every path of the app; HEAD is
answered wherever GET is."""

from __future__ import annotations

import re

import httpx
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts

from tests.app.scrapes import moved, scrape
from tests.helpers import SIMPLE_BODY, assert_general_error

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def declared_methods(app: FastAPI) -> dict[str, set[str]]:
    """Each path template of the app and the methods its routes answer, together (HEAD
    with GET)."""
    by_path: dict[str, set[str]] = {}
    for route in iter_route_contexts(app.routes):
        if route.methods and route.path_format:
            methods = set(route.methods) | ({"HEAD"} if "GET" in route.methods else set())
            by_path.setdefault(route.path_format, set()).update(methods)
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
    assert len(paths) > 40 and paths["/cob/{txid}"] == {"GET", "HEAD", "PUT", "PATCH"}
    wrong = {}
    for template, methods in paths.items():
        for method in sorted(set(METHODS) - methods):
            response = await client.request(method, concrete(template))
            if response.status_code != 405 or allowed(response) != methods:
                wrong[f"{method} {template}"] = (response.status_code, response.headers)
    assert wrong == {}


async def test_options_on_a_charge_names_its_methods_in_its_family(
    client: httpx.AsyncClient,
) -> None:
    response = await client.options("/cob/x")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, PATCH, PUT"
    assert set(response.json()) == SIMPLE_BODY


async def test_a_path_with_one_route_per_method_in_the_general_envelope(
    client: httpx.AsyncClient,
) -> None:
    response = await client.delete("/api/webhooks")
    assert_general_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == "GET, HEAD, POST"


async def test_a_dashboard_page_does_not_allow_its_catch_all_404_method(
    client: httpx.AsyncClient,
) -> None:
    """Under /dashboard a 404 page answers GET at every other address; a path with routes of
    its own allows theirs only."""
    assert (await client.delete("/dashboard/logout")).headers["allow"] == "POST"
    assert (await client.delete("/dashboard/no-such-page")).headers["allow"] == "GET, HEAD"


async def test_static_files_keep_the_methods_they_answer(client: httpx.AsyncClient) -> None:
    response = await client.delete("/dashboard/static/dashboard.css")
    assert response.status_code == 405
    assert allowed(response) == {"GET", "HEAD"}


async def test_head_is_the_get_without_its_body(client: httpx.AsyncClient) -> None:
    got = await client.get("/healthz")
    head = await client.head("/healthz")
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"] != "0"
    assert head.headers["content-type"] == got.headers["content-type"]


async def test_head_of_an_authenticated_route_is_refused_like_its_get(
    client: httpx.AsyncClient,
) -> None:
    head = await client.head("/accounts/balances")
    assert head.status_code == (await client.get("/accounts/balances")).status_code == 401
    assert head.content == b""
    assert head.headers["www-authenticate"] == "Bearer"


async def test_head_where_only_post_is_taken_is_a_405(client: httpx.AsyncClient) -> None:
    response = await client.head("/api/pix/cash-out")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.content == b""


async def test_head_is_counted_as_head(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    assert (await client.head("/healthz")).status_code == 200
    after = await scrape(client)
    requests = "pixgate_requests_total"
    assert moved(before, after, requests, method="HEAD", route="/healthz", status="200") == 1
    assert moved(before, after, requests, method="GET", route="/healthz", status="200") == 0
