"""An account's externalIds are unique across its transactions (cash-in, cash-out, QR)."""

from __future__ import annotations

from uuid import UUID

from pixgate.core.db.pool import Connection
from pixgate.core.errors import DuplicateExternalId
from pixgate.payouts.queries import payments


async def refuse_duplicate(conn: Connection, account_id: int, external_id: str) -> None:
    """Before an insert: refuse an externalId the account already used."""
    existing = await payments.by_external_id(conn, account_id, external_id)
    if existing is not None:
        raise _duplicate(external_id, existing)


async def duplicate(conn: Connection, account_id: int, external_id: str) -> DuplicateExternalId:
    """After an insert found the externalId taken (by a request that committed meanwhile):
    the error to answer, naming the transaction that has it."""
    existing = await payments.by_external_id(conn, account_id, external_id)
    return _duplicate(external_id, existing)


def _duplicate(external_id: str, existing: UUID | None) -> DuplicateExternalId:
    details = {"externalId": external_id}
    if existing is not None:
        details["existingTransactionId"] = str(existing)
    return DuplicateExternalId(f"externalId {external_id} was already used", details=details)
