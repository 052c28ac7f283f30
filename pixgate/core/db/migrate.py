"""Alembic, driven from code so `pixgate db upgrade` and `pixgate serve` need no alembic.ini;
then the database-function files (`sql_files`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import asyncpg
from alembic import command
from alembic.config import Config

from pixgate.core.db import sql_files

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    """The migrations' configuration; env.py connects with asyncpg to `database_url` as the
    gateway does, so any URL the gateway takes (several hosts, `target_session_attrs`) works,
    where SQLAlchemy's URL parser takes one host only."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # versions/ keeps its history in folders of ten revisions (0001_0010/, 0011_0020/, ...)
    config.set_main_option("recursive_version_locations", "true")
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """The migrations, then (at head) the database-function files that changed."""
    command.upgrade(alembic_config(database_url), revision)
    if revision == "head":
        _in_own_loop(_apply_sql_files(database_url))


async def _apply_sql_files(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await sql_files.apply(conn)
    finally:
        await conn.close()


def _in_own_loop(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(work)
        return
    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(work)
        except BaseException as exc:  # re-raised in the caller's thread
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]


def execute_script(sql: str) -> None:
    """Run a multi-statement SQL script in the migration's transaction.

    asyncpg refuses several statements in one prepared statement, so the script goes
    through the driver's simple-query protocol on the same connection.
    """
    from alembic import op
    from sqlalchemy.util.concurrency import await_

    driver_connection = op.get_bind().connection.driver_connection
    assert driver_connection is not None
    await_(driver_connection.execute(sql))
