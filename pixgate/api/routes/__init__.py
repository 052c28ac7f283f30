"""Every router of the API, in the order they appear in the OpenAPI document."""

from fastapi import APIRouter

from pixgate.api.routes import (
    auth,
    balances,
    cash_out,
    dict_transfer,
    ops,
    sandbox_dict,
    transactions,
    webhooks,
)

ROUTERS: list[APIRouter] = [
    auth.router,
    cash_out.router,
    dict_transfer.router,
    balances.router,
    transactions.router,
    webhooks.router,
    sandbox_dict.router,
    ops.router,
]
