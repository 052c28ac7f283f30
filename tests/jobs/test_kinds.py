"""Every kind of job: the registry binds each kind declared in `pixgate.jobs.queue` once, each
handler takes its kind's arguments dataclass, and the arguments every path enqueues (the SQL
functions' included) are exactly that dataclass's fields."""

from __future__ import annotations

import inspect
import typing
from dataclasses import fields, is_dataclass
from typing import Any

import httpx
import pytest

from pixgate.jobs import queue as jobs
from pixgate.jobs import worker
from pixgate.jobs.registry import HANDLERS
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.charges.test_cash_in import create_charge, split
from tests.helpers import bearer, make_account
from tests.refunds.helpers import CPF, EVP, receive, refund_in
from tests.sandbox.test_sandbox_pay import PAY, PAYER


def _field_names(kind: jobs.JobKind[Any]) -> set[str]:
    return {field.name for field in fields(kind.args)}


def test_the_registry_binds_every_declared_kind_once() -> None:
    declared = {value.name for value in vars(jobs).values() if isinstance(value, jobs.JobKind)}
    assert set(HANDLERS) == declared
    for name, spec in HANDLERS.items():
        assert spec.kind.name == name
        assert is_dataclass(spec.kind.args) and spec.kind.args.__dataclass_params__.frozen


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_each_handler_takes_its_kinds_arguments(name: str) -> None:
    spec = HANDLERS[name]
    runtime, arguments = inspect.signature(spec.handler).parameters
    hints = typing.get_type_hints(spec.handler)
    assert (hints[runtime], hints[arguments]) == (Runtime, spec.kind.args)


async def _enqueue_through_every_path(rt: Runtime, client: httpx.AsyncClient) -> None:
    """A cash-out, a refund of a received PIX and a paid charge with an immediate and an
    hourly split, settled, with a webhook URL for cash-outs: each kind of job, enqueued by
    the SQL functions that hold payouts and refunds and record events, and by Python."""
    account = await make_account(rt, balance="1000.00")
    headers = await bearer(client, account)
    async with rt.db.begin() as conn:
        await conn.execute("UPDATE accounts SET split_frequency = 'hourly'")
    await webhooks.add(rt, account.account_id, event_type="cash_out", url="http://127.0.0.1:9/")
    sent = await client.post(
        "/api/pix/cash-out",
        json={
            "value": "5.00",
            "externalId": "kinds-1",
            "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
        },
        headers=headers,
    )
    assert sent.status_code == 201, sent.text
    received = await receive(client, headers, "30.00")
    refunded = await refund_in(client, headers, received["transactionId"], "3.00")
    assert refunded.status_code < 300, refunded.text
    charge = await create_charge(
        client, headers, value="20.00", splits=[split("10"), split("1.00", "FIXED", immediate=True)]
    )
    paid = await client.post(
        PAY, json={"pixCode": charge["pixCode"], "payer": PAYER}, headers=headers
    )
    assert paid.status_code == 201, paid.text
    while await worker.run_once(rt, kinds=[jobs.SETTLE_PAYOUT.name]):
        pass


async def test_every_path_enqueues_exactly_the_fields_of_its_kind(
    rt: Runtime, client: httpx.AsyncClient
) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    await _enqueue_through_every_path(rt, client)
    async with rt.db.connection() as conn:
        rows = await conn.fetch(
            "SELECT j.kind, j.args, t.kind AS paid FROM jobs j "
            "LEFT JOIN transactions t ON t.id = (j.args ->> 'transaction_id')::bigint"
        )
    assert {row["kind"] for row in rows} == set(HANDLERS)
    for row in rows:
        kind = HANDLERS[row["kind"]].kind
        assert set(row["args"]) == _field_names(kind), row["kind"]
        assert kind.args(**row["args"]) is not None
    settled = {row["paid"] for row in rows if row["kind"] == jobs.SETTLE_PAYOUT.name}
    assert settled == {"cash_out", "refund_in", "split_payout"}


async def test_a_job_queued_before_typed_arguments_still_runs(rt: Runtime) -> None:
    """The JSON the SQL functions wrote before the arguments had dataclasses, as it may wait
    in the table across an upgrade: its handler runs (and finds nothing to do)."""
    async with rt.db.begin() as conn:
        await conn.execute(
            "INSERT INTO jobs (kind, args, max_attempts) VALUES "
            """('payouts.settle', '{"transaction_id": 987654}', 30),"""
            """('charges.expire', '{"charge_id": 987654}', 30)"""
        )
    assert await worker.run_once(rt) == 2
    async with rt.db.connection() as conn:
        assert await conn.fetchval("SELECT array_agg(DISTINCT status) FROM jobs") == ["done"]
