"""What an operation costs the account: `accounts.fees[operation]`, else the settings' default.

`accounts.fees` holds `{operation: {"fixed": "0.50", "percent": "1.0"}}` as the CLI writes
it (`pixgate accounts update --fee cash_out=0.50+1%`). Called inside the caller's
transaction, so the price and the hold see the same account row.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pixgate.accounts.queries import accounts as account_rows
from pixgate.core.db.pool import Connection
from pixgate.core.money import fee_for, to_cents
from pixgate.core.settings import Settings


async def for_operation(
    settings: Settings, conn: Connection, account_id: int, operation: str, amount: int
) -> int:
    """The fee in cents of `operation` for `amount` cents."""
    return of(settings, await account_rows.fees_of(conn, account_id), operation, amount)


def of(settings: Settings, account_fees: dict[str, Any], operation: str, amount: int) -> int:
    """The fee from an account's `fees` column already at hand (e.g. the locked row)."""
    configured = account_fees.get(operation)
    if configured:
        fixed = to_cents(configured.get("fixed", "0"))
        percent = Decimal(str(configured.get("percent", "0")))
    else:
        fixed = to_cents(settings.default_fee_fixed)
        percent = settings.default_fee_percent
    return fee_for(amount, fixed, percent)
