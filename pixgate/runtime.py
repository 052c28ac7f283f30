"""The composition root: one `Runtime` serves the API, the worker and the CLI.

Nothing connects at import time; `build_runtime` opens the pool, makes sure the
gateway's own keys exist, and closes everything on exit.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pixgate.accounts.queries import server_keys
from pixgate.accounts.queries.accounts import TermsCache
from pixgate.accounts.rules.tokens import Revocations, TokenSigner
from pixgate.charges.rules.location_jws import LocationSigner
from pixgate.core.clock import Clock
from pixgate.core.db.pool import Connection, Database
from pixgate.core.db.replica import Read, Replica, reading
from pixgate.core.settings import Settings
from pixgate.provider.base import SettlingBank
from pixgate.provider.choice import provider_for


@dataclass
class Runtime:
    settings: Settings
    db: Database
    signer: TokenSigner
    secret_hash_key: bytes
    provider: SettlingBank
    location_pem: str = field(repr=False)
    """The RSA key that signs the payloads of charges' locations (`location_signer`)."""
    dashboard_key: bytes
    """HMAC key of the dashboard's session cookies and CSRF tokens."""
    clock: Clock = field(default_factory=Clock)
    account_terms: TermsCache = field(default_factory=TermsCache)
    revocations: Revocations = field(default_factory=Revocations)
    replica: Replica | None = None
    """The standby that reads which move no money may come from (`reads`)."""

    def reads(self) -> AbstractAsyncContextManager[tuple[Connection, Read]]:
        """A connection for a read that may be a little behind: the standby's while it is
        within `read_max_lag_s` of the primary, else the primary's; and where it came from."""
        return reading(self.db, self.replica)

    @cached_property
    def location_signer(self) -> LocationSigner:
        """Parsed when first used: parsing checks the RSA key, a sixth of a second that only
        charges' payloads need, not every command of the CLI."""
        return LocationSigner.from_pem(self.location_pem)


def resolve_database_url(settings: Settings) -> str:
    """The configured server, or the embedded one (started or joined) when none is set; the
    embedded server's code (psutil among it) is only loaded then."""
    if settings.database_url:
        return settings.database_url
    from pixgate.core.db import embedded

    ensure_runtime_dir()
    return embedded.start(settings.data_dir)


def ensure_runtime_dir() -> None:
    """Give the process an `XDG_RUNTIME_DIR` when it has none (a container, `su`, cron).

    The embedded server's wheel keeps its start-up lock in the user's runtime directory,
    which it asks `platformdirs` for as it is imported; without the variable, `platformdirs`
    warns on every command. The system's `/run/user/<uid>` is used when there is one;
    otherwise a directory of pixgate's own in the temporary directory, made as the XDG
    specification wants it (the user's, mode 0700). One that is not (another user's) is
    left alone, and the warning then says why."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    uid = os.getuid()
    system = Path(f"/run/user/{uid}")
    if system.is_dir() and os.access(system, os.W_OK):
        os.environ["XDG_RUNTIME_DIR"] = str(system)
        return
    own = Path(tempfile.gettempdir()) / f"pixgate-runtime-{uid}"
    own.mkdir(mode=0o700, exist_ok=True)
    found = own.lstat()
    if stat.S_ISDIR(found.st_mode) and found.st_uid == uid and stat.S_IMODE(found.st_mode) == 0o700:
        os.environ["XDG_RUNTIME_DIR"] = str(own)


async def load_keys(db: Database, settings: Settings) -> tuple[TokenSigner, bytes, str, bytes]:
    """Configured keys win; otherwise they are generated once and kept in the database."""
    async with db.begin() as conn:
        if settings.jwt_private_key is not None:
            jwt_pem = settings.jwt_private_key.get_secret_value()
        else:
            jwt_pem = await server_keys.get_or_create(conn, "jwt_ed25519", TokenSigner.generate_pem)
        if settings.secret_hash_key is not None:
            hash_key = settings.secret_hash_key.get_secret_value()
        else:
            hash_key = await server_keys.get_or_create(
                conn, "secret_hash_key", lambda: secrets.token_hex(32)
            )
        location_pem = await server_keys.get_or_create(
            conn, "location_rsa", LocationSigner.generate_pem
        )
        if settings.dashboard_session_key is not None:
            dashboard_key = settings.dashboard_session_key.get_secret_value()
        else:
            dashboard_key = await server_keys.get_or_create(
                conn, "dashboard_session_key", lambda: secrets.token_hex(32)
            )
    signer = TokenSigner.from_pem(
        jwt_pem, issuer=settings.jwt_issuer, audience=settings.jwt_audience
    )
    return (
        signer,
        hash_key.encode(),
        location_pem,
        dashboard_key.encode(),
    )


@asynccontextmanager
async def build_runtime(settings: Settings, database_url: str) -> AsyncIterator[Runtime]:
    db = await Database.connect(
        database_url,
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        connect_timeout=settings.db_connect_timeout_s,
        behind_pooler=settings.db_pooler == "transaction",
        direct_dsn=settings.direct_database_url,
        lanes=settings.db_write_lanes,
    )
    standby = None
    if settings.read_database_url:
        # min_size 0: a standby that is down must not stop the gateway from starting
        standby = Replica(
            await Database.connect(
                settings.read_database_url,
                min_size=0,
                max_size=settings.db_pool_max,
                connect_timeout=settings.db_connect_timeout_s,
            ),
            settings.read_max_lag_s,
        )
    try:
        signer, hash_key, location_pem, dashboard_key = await load_keys(db, settings)
        yield Runtime(
            settings=settings,
            db=db,
            signer=signer,
            secret_hash_key=hash_key,
            provider=provider_for(settings, db),
            location_pem=location_pem,
            dashboard_key=dashboard_key,
            replica=standby,
        )
    finally:
        if standby is not None:
            await standby.close()
        await db.close()
