"""Which settling bank the gateway talks to: `PIXGATE_PROVIDER` names it.

The composition root asks here instead of naming a bank, so adding a real bank is one
entry in `PROVIDERS` and one value of `Settings.provider`.
"""

from __future__ import annotations

from collections.abc import Callable

from pixgate.core.db.pool import Database
from pixgate.core.settings import Settings
from pixgate.provider.base import SettlingBank
from pixgate.sandbox.public import SandboxBank

PROVIDERS: dict[str, Callable[[Settings, Database], SettlingBank]] = {"sandbox": SandboxBank}


def provider_for(settings: Settings, db: Database) -> SettlingBank:
    """The settling bank `settings.provider` names (the settings allow only known names)."""
    return PROVIDERS[settings.provider](settings, db)
