"""The new-charge form's rules, read from the server's own: the expiration's bounds are the
API body's (`CashInTransaction.expirationTime`) and the settling bank's minimum
(`PIXGATE_PROVIDER_MIN_EXPIRATION`), so the form never offers what the server refuses."""

from __future__ import annotations

from annotated_types import Ge, Le

from pixgate.charges.public import CashInTransaction
from pixgate.core.settings import Settings

FIELDS = ("value", "description", "externalId", "payerName", "payerDocument", "expiration")
DEFAULT_EXPIRATION_S = 3600


def expiration_bounds(settings: Settings) -> tuple[int, int]:
    """The shortest and longest expiration a cash-in charge may have, in seconds."""
    metadata = CashInTransaction.model_fields["expirationTime"].metadata
    low = next(m.ge for m in metadata if isinstance(m, Ge))
    high = next(m.le for m in metadata if isinstance(m, Le))
    assert isinstance(low, int) and isinstance(high, int)
    return max(low, settings.provider_min_expiration), high
