"""Isolation sweep (security item 7): account B holding account A's identifiers.

Every route that takes an id, externalId, txid, end-to-end id, PIX key, idempotency key,
event id, location token or similar is called by account B with account A's value. The
answer must be 404 (or the route's documented refusal), an empty page, or B's own new
object; it must carry none of A's identifiers, amounts or names; and none of A's objects may
change (`snapshot` re-reads A through the API and its rows, jobs and webhook deliveries).

A's objects are made through the HTTP API and the worker, as an integrator makes them: a
settled cash-out, a paid and an open cash-in charge, a cob, a settled QR cash-out, a settled
DICT transfer, a PIX received with a settled refund and a MED case against it, two webhook
URLs (with their delivered events) and a sandbox DICT key; and, under the API Pix's base
path, a cob on A's PIX key revised once, a location serving no cob, and a webhook on A's key.

Every route of `pixgate.routers.ROUTERS` and `API_PIX_ROUTERS` (at its mounted path, under the
API Pix's default base path) is classified below: rows of ROWS (B calls it
with A's value), BY_DESIGN (it reaches another account's object on purpose, each with its own
test here), or NAMES_NO_OBJECT. `TestGuard` fails for a route that is none of these, so a new
route must join the sweep.
"""

from __future__ import annotations

import pytest

from tests.app.isolation_calls import Row, call_as_b
from tests.app.isolation_rows import BY_DESIGN, NAMES_NO_OBJECT, ROWS, api_routes
from tests.app.isolation_world import World, changes, leaks, snapshot


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
async def test_b_with_a_value(world: World, row: Row) -> None:
    before = await snapshot(world)
    sent, response = await call_as_b(world, row.method, row.path, row.fill(world))
    await row.expect(world, response)
    assert leaks(world, sent, response) == [], response.text
    assert changes(before, await snapshot(world)) == []


# --- the guard ------------------------------------------------------------------------------


class TestGuard:
    def test_every_route_is_in_the_sweep(self) -> None:
        swept = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys()
        missing = sorted(api_routes() - swept - NAMES_NO_OBJECT.keys())
        assert missing == [], f"add rows to ROWS (or classify) for {missing}"

    def test_every_route_with_a_path_parameter_has_a_row(self) -> None:
        swept = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys()
        missing = sorted(r for r in api_routes() if "{" in r[1] and r not in swept)
        assert missing == [], f"a route naming an object needs rows in ROWS: {missing}"
        assert not [r for r in NAMES_NO_OBJECT if "{" in r[1]]

    def test_no_row_names_a_route_that_is_gone(self) -> None:
        listed = {(r.method, r.path) for r in ROWS} | BY_DESIGN.keys() | NAMES_NO_OBJECT.keys()
        assert sorted(listed - api_routes()) == []
        assert len({r.id for r in ROWS}) == len(ROWS)
