"""Every status a dashboard page can show has its one pt-BR label, and every time is written
`dd/mm/aaaa HH:MM` with its zone named."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from pixgate.core.labels import ChargeStatus, TransactionStatus
from pixgate.dashboard.views import labels
from pixgate.webhooks.public import DELIVERY_STATES
from pixgate.webhooks.rules.webhooks import DeliveryStatus

STORED = [
    *TransactionStatus,
    *ChargeStatus,
    *DeliveryStatus,
    *DELIVERY_STATES,
    "active",
    "inactive",
]


@pytest.mark.parametrize("code", STORED, ids=str)
def test_every_stored_status_has_a_label(code: str) -> None:
    assert code in labels.STATUS_LABELS


def test_the_labels_are_the_statements_and_one_language() -> None:
    assert labels.status_label("PENDING") == labels.status_label("pending") == "Pendente"
    assert labels.status_label("CONFIRMED") == "Confirmado"
    assert labels.status_label("ERROR") == "Erro"
    assert labels.badge("ERROR") == labels.badge("failed") == "error"
    assert labels.badge("CONCLUIDA") == labels.badge("delivered") == "confirmed"
    assert labels.status_label("SOMETHING_NEW") == "SOMETHING_NEW"


@pytest.mark.parametrize(
    ("zone", "shown"),
    [
        ("America/Sao_Paulo", "02/03/2026 12:05 BRT"),
        ("America/Manaus", "02/03/2026 11:05 AMT"),
        ("UTC", "02/03/2026 15:05 UTC"),
        ("Europe/Lisbon", "02/03/2026 15:05 WET"),
        ("Asia/Dubai", "02/03/2026 19:05 Asia/Dubai"),
    ],
)
def test_times_are_day_first_with_the_zone_named(zone: str, shown: str) -> None:
    at = datetime(2026, 3, 2, 15, 5, 59, tzinfo=UTC)
    assert labels.local_time(at, ZoneInfo(zone)) == shown
    assert labels.local_time(at.isoformat(), ZoneInfo(zone)) == shown
    assert labels.local_time(None, ZoneInfo(zone)) == ""


def test_what_a_url_answered() -> None:
    assert labels.answer(200, None, ok=True) == "answered 200"
    assert labels.answer(503, None, ok=False) == "answered 503 (failed)"
    assert labels.answer(None, "ConnectError: refused", ok=False) == (
        "did not answer (ConnectError: refused)"
    )
