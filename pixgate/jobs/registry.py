"""`@job` declares a handler by name; each module of `pixgate.jobs` registers its own."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pixgate.db.jobs import JobKind

if TYPE_CHECKING:
    from pixgate.runtime import Runtime

Handler = Callable[..., Awaitable[None]]


@dataclass(frozen=True, slots=True)
class JobSpec:
    handler: Handler


HANDLERS: dict[str, JobSpec] = {}


class Retry(Exception):
    """Raised by a handler to be run again after `after` seconds (e.g. a Retry-After)."""

    def __init__(self, after: float, reason: str = "retry requested") -> None:
        super().__init__(reason)
        self.after = after


def job(kind: JobKind) -> Callable[[Handler], Handler]:
    """Bind `handler` to `kind`, declared in `pixgate.db.jobs`."""

    def register(handler: Handler) -> Handler:
        HANDLERS[kind.name] = JobSpec(handler)
        return handler

    return register


def load_handlers() -> dict[str, JobSpec]:
    import pixgate.jobs as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return HANDLERS


async def run_handler(rt: Runtime, kind: str, args: dict[str, Any]) -> None:
    await HANDLERS[kind].handler(rt, **args)
