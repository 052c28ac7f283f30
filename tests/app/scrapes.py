"""Reading a `/metrics` answer in tests (its samples by name and labels, the series it
declares), and the cash-out with a webhook that moves the settlement and webhook metrics."""

from __future__ import annotations

import uuid

import httpx
from prometheus_client.parser import text_string_to_metric_families

from pixgate.runtime import Runtime
from pixgate.webhooks.service import destinations
from tests.helpers import bearer, make_account
from tests.webhooks.receiver import Receiver

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
"""The series names each type of family exposes."""


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(scraped: Samples, name: str, **labels: str) -> float:
    """A sample's value; 0 when the series does not exist yet (a counter never moved)."""
    return scraped.get((name, frozenset(labels.items())), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def series_labels(text: str) -> dict[str, set[str]]:
    """Every series name the scrape declares, with the label names its family takes."""
    declared: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        for suffix in SUFFIXES.get(family.type, ("",)):
            declared[family.name + suffix] = labels
    return declared


async def scrape(client: httpx.AsyncClient) -> Samples:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


CPF = "52998224725"
EVP = "123e4567-e12b-42d3-a456-426614174000"


async def allow_loopback_webhooks(rt: Runtime) -> None:
    """Webhooks registered through the API, to a receiver on the loopback over http, and no
    destination remembered as silent from an earlier test's receiver at the same port."""
    destinations.forget()
    rt.settings = rt.settings.model_copy(
        update={"webhook_api_enabled": True, "allow_insecure_webhooks": True}
    )


async def hooked_account(
    client: httpx.AsyncClient, rt: Runtime, receiver: Receiver, path: str = "/hook"
) -> dict[str, str]:
    """An account with money and a `cash_out` webhook at `receiver`: its request headers.
    Needs `webhook_api_enabled` and `allow_insecure_webhooks` (a loopback http receiver)."""
    account = await make_account(rt, balance="100.00")
    headers = await bearer(client, account)
    hook = {"url": receiver.url(path), "eventType": "cash_out"}
    assert (await client.post("/api/webhooks", json=hook, headers=headers)).status_code == 200
    return headers


async def cash_out(
    client: httpx.AsyncClient, headers: dict[str, str], scenario: str | None = None
) -> None:
    """A cash-out accepted (201), not settled yet: its `payouts.settle` job is due."""
    scenario_header = {"X-Sandbox-Scenario": scenario} if scenario else {}
    response = await client.post(
        "/api/pix/cash-out",
        json={
            "value": "12.34",
            "externalId": f"metrics-{uuid.uuid4().hex[:12]}",
            "details": {"key": EVP, "keyType": "RANDOM", "name": "Fulano", "document": CPF},
        },
        headers={**headers, **scenario_header},
    )
    assert response.status_code == 201, response.text
