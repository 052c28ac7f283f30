"""Every router of the API, in the order they appear in the OpenAPI document.

`API_PIX_ROUTERS` are the Central Bank's API Pix, mounted under `PIXGATE_API_PIX_BASE_PATH`.
"""

from fastapi import APIRouter

from pixgate import ops
from pixgate.accounts.routes import auth, balances
from pixgate.charges.routes import api_pix_cob, api_pix_loc, cash_in, cob, locations, qr
from pixgate.dashboard.routes import charges as dashboard_charges
from pixgate.dashboard.routes import deliveries as dashboard_deliveries
from pixgate.dashboard.routes import pages as dashboard
from pixgate.dashboard.routes import transactions as dashboard_transactions
from pixgate.dashboard.routes import webhooks as dashboard_webhooks
from pixgate.ledger import routes as transactions
from pixgate.med.routes import med, sandbox_med
from pixgate.payouts.routes import cash_out, cash_out_qrcode, dict_transfer
from pixgate.refunds.routes import api_pix_devolucao, api_pix_pix, devolucao, refund_in
from pixgate.sandbox.routes import dict as sandbox_dict
from pixgate.sandbox.routes import pix as sandbox_pix
from pixgate.webhooks import routes as webhooks
from pixgate.webhooks.by_key import routes as webhooks_by_key

ROUTERS: list[APIRouter] = [
    auth.router,
    cash_in.router,
    cash_out.router,
    cash_out_qrcode.router,
    refund_in.router,
    dict_transfer.router,
    cob.router,
    devolucao.router,
    locations.router,
    qr.router,
    balances.router,
    transactions.router,
    med.router,
    webhooks.router,
    sandbox_dict.router,
    sandbox_pix.router,
    sandbox_med.router,
    ops.router,
    # HTML pages, not in the OpenAPI document; last, for the dashboard's catch-all 404 page
    dashboard_transactions.router,
    dashboard_charges.router,
    dashboard_webhooks.router,
    dashboard_deliveries.router,
    dashboard.router,
]

API_PIX_ROUTERS: list[APIRouter] = [
    api_pix_cob.router,
    api_pix_cob.query_router,
    api_pix_loc.router,
    api_pix_loc.query_router,
    api_pix_pix.router,
    api_pix_devolucao.router,
    webhooks_by_key.router,
    webhooks_by_key.list_router,
]
