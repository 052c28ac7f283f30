"""The database functions, applied from versioned files whenever a file changes.

The SQL functions in `pixgate/*/sql/*.sql` hold the rules of money that the hot path runs
in the database (balance moves, limits, holds, settlements, the webhook outbox): each rule
is written there once and every path, Python ones included, calls it. Unlike a migration, a
file is not frozen once applied: `pixgate db upgrade` (and `pixgate serve` on the embedded
default) runs, in name order, every file whose checksum differs from the one recorded in
`sql_files` (a repeatable migration, as Flyway's `R__` scripts). Each file drops and
re-creates its functions, so a changed signature needs nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pixgate.core.db.pool import RawConnection

PACKAGE = Path(__file__).resolve().parent.parent.parent
"""`pixgate/`: each feature keeps its functions in its own `sql/` folder."""

# One applier at a time when several processes start together (the migrations' lock + 1).
_LOCK = 7268143


@dataclass(frozen=True, slots=True)
class SqlFile:
    name: str
    text: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def files() -> list[SqlFile]:
    paths = sorted(PACKAGE.glob("**/sql/*.sql"), key=lambda path: path.name)
    return [SqlFile(path.name, path.read_text()) for path in paths]


async def apply(conn: RawConnection) -> list[str]:
    """Run the files that changed since they were last applied; their names, in order."""
    async with conn.transaction():
        await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        recorded = {
            r["name"]: r["checksum"]
            for r in await conn.fetch("SELECT name, checksum FROM sql_files")
        }
        changed = [f for f in files() if recorded.get(f.name) != f.checksum]
        for sql_file in changed:
            await conn.execute(sql_file.text)
            await conn.execute(
                "INSERT INTO sql_files (name, checksum) VALUES ($1, $2) "
                "ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, "
                "applied_at = now()",
                sql_file.name,
                sql_file.checksum,
            )
    return [f.name for f in changed]
