"""The public module of accounts: what other features use of it, and the only module they
import."""

from pixgate.accounts.queries import accounts as accounts_queries
from pixgate.accounts.queries.accounts import Account, Terms
from pixgate.accounts.queries.accounts import get as get_account
from pixgate.accounts.routes.deps import (
    CurrentAccount,
    ProviderInstructions,
    RuntimeDep,
    granted,
    sandbox_only,
)
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import accounts as accounts_service
from pixgate.accounts.service import auth, balances, fees

__all__ = [
    "Account",
    "CurrentAccount",
    "ProviderInstructions",
    "RuntimeDep",
    "Scope",
    "Terms",
    "accounts_queries",
    "accounts_service",
    "auth",
    "balances",
    "fees",
    "get_account",
    "granted",
    "sandbox_only",
]
