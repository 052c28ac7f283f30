"""The handler of every job kind, written out in one table.

A kind and the dataclass of its arguments are declared in `pixgate.jobs.queue`; `HANDLERS`
binds each to the function that runs it, which takes the runtime and that dataclass. The
table is the whole list (nothing registers itself when a module is imported), and mypy
checks that each handler takes its kind's arguments; `tests/jobs/test_kinds.py` checks that
the arguments each kind is enqueued with build that dataclass.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

from pixgate.charges.jobs import expiry as charges
from pixgate.charges.jobs import splits
from pixgate.jobs.queue import (
    DELIVER_WEBHOOK,
    EXPIRE_CHARGE,
    RUN_DUE_SPLITS,
    SETTLE_PAYOUT,
    A,
    JobKind,
)
from pixgate.payouts import jobs as settlement
from pixgate.webhooks import jobs as webhooks

if TYPE_CHECKING:
    from pixgate.runtime import Runtime


@dataclass(frozen=True, slots=True)
class JobSpec(Generic[A]):
    """A kind and its handler."""

    kind: JobKind[A]
    handler: Callable[[Runtime, A], Awaitable[None]]

    async def run(self, rt: Runtime, args: dict[str, Any]) -> None:
        """Run the handler on a claimed row's args, built into the kind's dataclass (a
        missing or unknown key fails the attempt, as any error of the handler does)."""
        await self.handler(rt, self.kind.args(**args))


def _by_kind(*specs: JobSpec[Any]) -> dict[str, JobSpec[Any]]:
    return {spec.kind.name: spec for spec in specs}


HANDLERS: dict[str, JobSpec[Any]] = _by_kind(
    JobSpec(SETTLE_PAYOUT, settlement.settle),
    JobSpec(EXPIRE_CHARGE, charges.expire),
    JobSpec(RUN_DUE_SPLITS, splits.run_due),
    JobSpec(DELIVER_WEBHOOK, webhooks.deliver),
)
