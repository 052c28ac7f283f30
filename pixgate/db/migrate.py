"""Alembic, driven from code so `pixgate db upgrade` and `pixgate serve` need no alembic.ini."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(database_url))
    return config


def sqlalchemy_url(database_url: str) -> str:
    """Alembic goes through SQLAlchemy's asyncpg dialect; the request path never does."""
    _, rest = database_url.split("://", 1)
    return f"postgresql+asyncpg://{rest}".replace("%", "%%")


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


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
