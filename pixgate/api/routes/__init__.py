"""Every router of the API, in the order they appear in the OpenAPI document."""

from fastapi import APIRouter

from pixgate.api.routes import auth, balances, ops, webhooks

ROUTERS: list[APIRouter] = [auth.router, balances.router, ops.router, webhooks.router]
