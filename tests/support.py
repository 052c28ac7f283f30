"""Stand-ins and shortcuts only tests (and the benches) use: a clock moved by hand, the job
queue run until it is empty, a valid CNPJ made from its base."""

from __future__ import annotations

from datetime import datetime, timedelta

from pixgate.core.clock import Clock
from pixgate.core.pix import documents
from pixgate.jobs.worker import run_once
from pixgate.runtime import Runtime


class FixedClock(Clock):
    """A clock tests move by hand."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> None:
        self.at += timedelta(**delta)


async def drain(rt: Runtime, *, kinds: list[str] | None = None, rounds: int = 100) -> int:
    """Run due jobs until none is left (jobs that enqueue jobs included); how many ran."""
    total = 0
    for _ in range(rounds):
        ran = await run_once(rt, kinds=kinds)
        if ran == 0:
            break
        total += ran
    return total


def make_cnpj(base12: str) -> str:
    """The valid CNPJ that starts with these 12 characters of `[0-9A-Z]`: the check digits
    are the ones `documents.is_valid_cnpj` computes."""
    if documents._CNPJ_BASE.fullmatch(base12) is None:
        raise ValueError("a CNPJ base is 12 characters of [0-9A-Z]")
    return base12 + documents._cnpj_digits(base12)
