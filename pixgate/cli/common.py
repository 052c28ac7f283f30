"""What every `pixgate` command shares: the database, a runtime per call, JSON output.

The gateway's own modules (settings, the runtime, the database), and asyncio under them,
are imported inside the functions that use them: `pixgate --help` and a mistyped option then
answer without loading them, and a command loads only what it runs.
"""

from __future__ import annotations

import atexit
import gc
import sys
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
import typer
from rich.console import Console

if TYPE_CHECKING:
    from pixgate.core.settings import Settings
    from pixgate.runtime import Runtime

console = Console(markup=False, emoji=False)
"""Prints data as it is: an account's name or a URL holding `[/x]` or `:smile:` is neither
rich markup (which would fail on it) nor an emoji code (whose table rich would load)."""
T = TypeVar("T")


def exit_without_collecting() -> None:
    """At exit, after the other exit handlers, move every object left out of the collector's
    reach: the interpreter's last collections then skip them, and a command ends about a
    sixth of a second (of CPU) sooner. The memory goes back with the process all the same;
    only finalizers of objects still in reference cycles do not run, and a command leaves
    none that matters (its connections and files are closed by then)."""
    atexit.register(gc.freeze)


def resolved_url(settings: Settings) -> str:
    """The configured server, or the embedded one; a data directory that pixgate on another
    machine uses is an error of the command, not a traceback."""
    if settings.database_url:
        return settings.database_url
    from pixgate.core.db.embedded import ServedElsewhere
    from pixgate.runtime import resolve_database_url

    try:
        return resolve_database_url(settings)
    except ServedElsewhere as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


def database_url(settings: Settings) -> str:
    """Resolve the database and, on the embedded default, bring its schema up to date.

    A schema already current costs one connection and two queries
    (`schema_version.is_current`), not the load of Alembic; the database is only created
    when that connection finds none."""
    url = resolved_url(settings)
    if settings.database_url is None:
        import asyncio

        from pixgate.core.db import schema_version

        if not asyncio.run(schema_version.is_current(url)):
            from pixgate.core.db import embedded, migrate

            asyncio.run(embedded.ensure_database(url))
            migrate.upgrade(url)
    return url


def run(action: Callable[[Runtime], Awaitable[T]], *, first_connections: int | None = 1) -> T:
    """Run one service call with a runtime, turning PixgateError into exit code 1.

    On uvloop, the loop uvicorn gives the API: `pixgate worker` spends most of its time
    sending statements, and asyncio's own socket transport was the largest share of its CPU
    (docs/performance.md, "Worker concurrency and uvloop"). The pool opens
    `first_connections` as it starts (None: PIXGATE_DB_POOL_MIN's): one for a command that
    sends a few statements, which should not wait for backends it never uses."""
    import asyncio

    import uvloop

    from pixgate.core.errors import PixgateError
    from pixgate.core.settings import Settings
    from pixgate.runtime import build_runtime

    settings = Settings()
    url = database_url(settings)
    if first_connections is not None:
        settings = settings.model_copy(update={"db_pool_min": first_connections})

    async def main() -> T:
        async with build_runtime(settings, url) as rt:
            return await action(rt)

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main())
    except PixgateError as exc:
        message = exc.text
        typer.echo(f"error: {exc.code}: {message}", err=True)
        raise typer.Exit(1) from exc


def emit_json(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def money(value: int | None) -> str:
    return "-" if value is None else f"{Decimal(value) / 100:.2f}"


def shown(value: object) -> str:
    """A table cell: `-` for an empty field, JSON for a mapping, else the value as text."""
    if value is None or (isinstance(value, str | dict) and not value):
        return "-"
    if isinstance(value, dict):
        return orjson.dumps(value).decode()
    return str(value)
