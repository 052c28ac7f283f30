"""Is a database's schema current? Two cheap queries instead of loading Alembic.

Loading Alembic (and SQLAlchemy under it) takes most of a second, which every command on the
embedded default paid to learn that nothing had to change. The answer needs far less: the
revision in `alembic_version` against the head of the migration files, and the checksums
in `sql_files` against the database-function files. Only a database that is behind (or
new) goes through `migrate.upgrade`.
"""

from __future__ import annotations

import re
from pathlib import Path

import asyncpg

from pixgate.core.db import sql_files

VERSIONS = Path(__file__).resolve().parent / "migrations" / "versions"
_ASSIGNMENT = re.compile(r"^(down_revision|revision)\b[^=\n]*=(.*)$", re.MULTILINE)
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")


def heads(versions: Path = VERSIONS) -> set[str]:
    """The revisions no other revision revises, read from the files' `revision` and
    `down_revision` lines as Alembic reads them, without importing them."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in versions.rglob("*.py"):
        for name, value in _ASSIGNMENT.findall(path.read_text()):
            found = _QUOTED.findall(value)
            (revised if name == "down_revision" else revisions).update(found)
    return revisions - revised


async def is_current(database_url: str) -> bool:
    """The database is at the head revision and every function file is applied as it is
    (a database not created yet is not)."""
    try:
        conn = await asyncpg.connect(database_url)
    except asyncpg.InvalidCatalogNameError:
        return False
    try:
        if not await conn.fetchval("SELECT to_regclass('sql_files') IS NOT NULL"):
            return False
        versions = await conn.fetch("SELECT version_num FROM alembic_version")
        functions = await conn.fetch("SELECT name, checksum FROM sql_files")
    finally:
        await conn.close()
    recorded = {r["name"]: r["checksum"] for r in functions}
    as_written = all(recorded.get(f.name) == f.checksum for f in sql_files.files())
    return {r["version_num"] for r in versions} == heads() and as_written
