"""The database functions are the files in `pixgate/*/sql/`: applied when they change, and
never different in the database from what the files say."""

from __future__ import annotations

import re

import asyncpg

from pixgate.core.db import sql_files
from pixgate.runtime import Runtime

_CREATED = re.compile(r"^CREATE FUNCTION (\w+)\(", re.MULTILINE)


def _defined() -> list[str]:
    return [name for f in sql_files.files() for name in _CREATED.findall(f.text)]


def test_every_file_defines_functions_and_drops_them_first() -> None:
    for sql_file in sql_files.files():
        names = _CREATED.findall(sql_file.text)
        assert names, f"{sql_file.name} defines no function"
        dropped = re.search(r"^DROP FUNCTION IF EXISTS ([\w, ]+);", sql_file.text, re.MULTILINE)
        assert dropped is not None, f"{sql_file.name} must drop its functions before creating them"
        assert sorted(n.strip() for n in dropped[1].split(",")) == sorted(names), sql_file.name


_SOURCES = """
    SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.prosrc
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = $1 AND p.proname = ANY($2)
"""


async def test_the_database_runs_exactly_the_files(rt: Runtime) -> None:
    """Each function's body in the database equals the body the file creates: the files run
    again in a scratch schema (in a transaction rolled back), compared by name and source."""
    async with rt.db.connection() as conn:
        applied = await conn.fetch(_SOURCES, "public", _defined())
        tx = conn.transaction()
        await tx.start()
        try:
            await conn.execute("CREATE SCHEMA sql_files_check")
            # new functions land in the scratch schema; the tables and types stay visible
            await conn.execute("SET LOCAL search_path = sql_files_check, public")
            await conn.execute("SET LOCAL check_function_bodies = off")
            for sql_file in sql_files.files():
                await conn.execute(sql_file.text)
            fresh = await conn.fetch(_SOURCES, "sql_files_check", _defined())
        finally:
            await tx.rollback()
    by_name = {r["proname"]: (r["args"], r["prosrc"]) for r in fresh}
    assert sorted(by_name) == sorted(_defined())
    assert {r["proname"]: (r["args"], r["prosrc"]) for r in applied} == by_name


async def test_a_changed_file_is_applied_again_and_only_it(rt: Runtime) -> None:
    first = sql_files.files()[0]
    async with rt.db.connection() as conn:
        await conn.execute("UPDATE sql_files SET checksum = 'stale' WHERE name = $1", first.name)
    conn = await asyncpg.connect(rt.settings.database_url)
    try:
        assert await sql_files.apply(conn) == [first.name]
        assert await sql_files.apply(conn) == []
        recorded = await conn.fetchval("SELECT checksum FROM sql_files WHERE name = $1", first.name)
    finally:
        await conn.close()
    assert recorded == first.checksum


async def test_every_file_is_recorded(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        recorded = dict(await conn.fetch("SELECT name, checksum FROM sql_files"))
    assert recorded == {f.name: f.checksum for f in sql_files.files()}
