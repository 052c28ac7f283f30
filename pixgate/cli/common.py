"""What every `pixgate` command shares: the database, a runtime per call, JSON output."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any, TypeVar

import orjson
import typer
import uvloop
from rich.console import Console

from pixgate.core.errors import PixgateError
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime, build_runtime, resolve_database_url

console = Console()
T = TypeVar("T")


def database_url(settings: Settings) -> str:
    """Resolve the database and, on the embedded default, bring its schema up to date."""
    from pixgate.core.db import embedded, migrate

    url = resolve_database_url(settings)
    if settings.database_url is None:
        asyncio.run(embedded.ensure_database(url))
        migrate.upgrade(url)
    return url


def run(action: Callable[[Runtime], Awaitable[T]]) -> T:
    """Run one service call with a runtime, turning PixgateError into exit code 1.

    On uvloop, the loop uvicorn gives the API: `pixgate worker` spends most of its time
    sending statements, and asyncio's own socket transport was the largest share of its CPU
    (docs/performance.md, "Worker concurrency and uvloop")."""
    settings = Settings()
    url = database_url(settings)

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
