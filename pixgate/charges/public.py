"""The public module of charges: what other features use of it, and the only module they
import."""

from pixgate.charges.queries import charges as charges_queries
from pixgate.charges.queries import settled_at_once
from pixgate.charges.routes.cash_in import cash_in_order, qr_code_png
from pixgate.charges.schemas.cash_in import CashInPayer, CashInTransaction
from pixgate.charges.service import cash_in, charge_list
from pixgate.charges.service import charges as charges_service

__all__ = [
    "CashInPayer",
    "CashInTransaction",
    "cash_in",
    "cash_in_order",
    "charge_list",
    "charges_queries",
    "charges_service",
    "qr_code_png",
    "settled_at_once",
]
