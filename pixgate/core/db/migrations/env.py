"""Alembic environment: online migrations only, through SQLAlchemy's asyncpg dialect on a
connection asyncpg opens from the gateway's own URL (`migrate.alembic_config`)."""

from __future__ import annotations

import asyncio

import asyncpg
from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

config = context.config


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=None, transaction_per_migration=False)
    with context.begin_transaction():
        # One migrator at a time when several processes start together.
        context.execute("SELECT pg_advisory_xact_lock(7268142)")
        context.run_migrations()


async def _main() -> None:
    url = config.attributes["database_url"]
    engine = create_async_engine(
        "postgresql+asyncpg://",
        poolclass=pool.NullPool,
        async_creator=lambda: asyncpg.connect(url),
    )
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def _in_new_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_main())
        return
    import threading

    thread = threading.Thread(target=lambda: asyncio.run(_main()))
    thread.start()
    thread.join()


_in_new_loop()
