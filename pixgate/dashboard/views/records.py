"""What the dashboard's tables and detail pages read of a transaction, a charge or a
delivery: the API's shaping (labels, masking, amounts) plus the stored status code, which
`labels.status_label` turns into the one pt-BR label every page shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pixgate.ledger.public import ListedTransaction, Transaction

FINAL_CHARGE_STATUSES = frozenset(
    {"CONFIRMED", "CONCLUIDA", "EXPIRED", "REMOVIDA_PELO_USUARIO_RECEBEDOR", "REMOVIDA_PELO_PSP"}
)
"""A charge in one of these will not change again: its page stops asking."""


def listed(rows: Sequence[Transaction]) -> list[dict[str, Any]]:
    """Each transaction as `GET /api/transactions` shows it (camelCase keys, masked
    counterpart), with `statusCode`: the stored status, for the page's label."""
    return [
        ListedTransaction.model_validate(ListedTransaction.values_of(row)).model_dump()
        | {"statusCode": str(row.status)}
        for row in rows
    ]


@dataclass(frozen=True, slots=True)
class Step:
    """One line of a transaction's status history."""

    status: str
    at: datetime
    note: str = ""


def history(row: Transaction) -> list[Step]:
    """What the stored row tells of its life: made PENDING at `created_at`, settled
    (CONFIRMED or ERROR) at `processed_at`; a row still pending has one step."""
    steps = [Step("PENDING", row.created_at)]
    if row.status != "PENDING":
        note = ": ".join(part for part in (row.error_code, row.error_message) if part)
        steps.append(Step(str(row.status), row.processed_at or row.created_at, note))
    return steps
