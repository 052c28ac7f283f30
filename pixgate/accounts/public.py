"""The public module of accounts: what other features use of it, and the only module they
import."""

from pixgate.accounts.queries import accounts as accounts_queries
from pixgate.accounts.queries.accounts import Account, Terms
from pixgate.accounts.queries.accounts import get as get_account
from pixgate.accounts.queries.keys import AccountKey
from pixgate.accounts.queries.keys import find_owner as find_key_owner
from pixgate.accounts.queries.keys import of_account as keys_of
from pixgate.accounts.queries.keys import owner_locked as lock_key_owner
from pixgate.accounts.queries.keys import owner_of as key_owner
from pixgate.accounts.routes.deps import Caller, RuntimeDep, granted, sandbox_only
from pixgate.accounts.rules.scopes import Scope
from pixgate.accounts.service import accounts as accounts_service
from pixgate.accounts.service import auth, balances, fees

__all__ = [
    "Account",
    "AccountKey",
    "Caller",
    "RuntimeDep",
    "Scope",
    "Terms",
    "accounts_queries",
    "accounts_service",
    "auth",
    "balances",
    "fees",
    "find_key_owner",
    "get_account",
    "granted",
    "key_owner",
    "keys_of",
    "lock_key_owner",
    "sandbox_only",
]
