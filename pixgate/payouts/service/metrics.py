"""Settlement outcomes and the settling bank's answer time, for `/metrics` (docs/operations.md).

Counted by the process that runs the `payouts.settle` job: the API process with its
in-process worker, or a `pixgate worker`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from prometheus_client import Counter, Histogram

from pixgate.core.metrics import NETWORK_BUCKETS, labelled


class Outcome(StrEnum):
    """How one settlement ended: the bank's answer (`confirmed`, `error`, an expiry's
    `error` too), settled without the bank (`in_house`), or no answer (`bank_failed`: the
    call raised, and the job tries again later)."""

    CONFIRMED = "confirmed"
    ERROR = "error"
    IN_HOUSE = "in_house"
    BANK_FAILED = "bank_failed"


SETTLEMENTS = Counter(
    "pixgate_settlements_total",
    "Settlements of outgoing payments and returns, by transaction kind and outcome",
    ["kind", "outcome"],
)
BANK_SECONDS = Histogram(
    "pixgate_settlement_bank_duration_seconds",
    "How long the settling bank took to answer a payment or a return",
    ["kind"],
    buckets=NETWORK_BUCKETS,
)


def settled(kind: str, outcome: Outcome) -> None:
    labelled(SETTLEMENTS, kind, outcome).inc()


@contextmanager
def asking_the_bank(kind: str) -> Iterator[None]:
    """Times the bank's answer; a call that raises is counted `bank_failed`."""
    started = time.perf_counter()
    try:
        yield
    except Exception:
        settled(kind, Outcome.BANK_FAILED)
        raise
    finally:
        labelled(BANK_SECONDS, kind).observe(time.perf_counter() - started)
