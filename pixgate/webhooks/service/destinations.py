"""Who may POST to a destination now: the per-destination gate of each event loop.

It is apart from the transport because it is the part that decides, without any I/O, how
much of the worker one receiver may hold. Each delivery waiting here holds one of its
worker's job slots, so a receiver that never answers could otherwise take them all and
stall every other job (settlements included) for as long as it hangs:

- at most `limit` POSTs are in flight to one scheme, host and port; the next deliveries
  wait for a slot in arrival order, each for at most `SLOT_WAIT_S`, and one that gets none
  by then is not sent. A receiver that answers frees slots every few milliseconds; once one
  has answered nothing for that long, deliveries that find no free slot do not wait at all;
- a destination whose POST ran to the deadline is *silent* until one of its POSTs is
  answered in time: meanwhile one POST at a time goes to it (a probe), and the deliveries
  waiting for it and every other new one are not sent.

The bound on POSTs in flight also keeps httpcore's pool small: the pool walks all its
connections for each idle one on every request and every response (O(n^2)), so a burst of
deliveries that opened 200 connections made every later POST slower, the backlog longer and
the burst larger (docs/performance.md, "Webhook POSTs per destination").

A delivery that is not sent is a failed attempt like any other (the caller logs it and
retries it on the schedule), so nothing is lost and the schedule stays the one documented.
So a receiver that hangs holds `limit` job slots, plus those that wait during its first
second, until its first deadline; then one.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from dataclasses import dataclass, field

from pixgate.webhooks.rules.webhooks import Destination

PROBES = 1
"""POSTs in flight at once to a silent destination."""

SLOT_WAIT_S = 1.0
"""The longest a delivery waits for one of its destination's slots (or the attempt's
timeout, if shorter)."""

SILENCE_MEMORY_S = 3600.0
"""A silent destination that nothing was sent to for this long starts afresh."""

_SWEEP_ABOVE = 256
"""Idle gates kept only for their silence are swept once there are more gates than this."""


class NotSent(Exception):
    """The destination takes no more POSTs from this process now; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class _Gate:
    limit: int
    in_flight: int = 0
    users: int = 0
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)
    answered_at: float = field(default_factory=time.monotonic)
    """monotonic time of the last answer in time (the gate's creation before the first)."""
    silent_at: float | None = None
    """monotonic time of the last POST that ran to the deadline with no answer in time
    since; None while the destination answers."""

    def silent(self, now: float) -> bool:
        return self.silent_at is not None and now - self.silent_at < SILENCE_MEMORY_S

    def idle(self) -> bool:
        return self.users == 0


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Destination, _Gate]] = (
    weakref.WeakKeyDictionary()
)


def _gate(destination: Destination, limit: int) -> _Gate:
    gates = _gates.setdefault(asyncio.get_running_loop(), {})
    gate = gates.get(destination)
    if gate is None:
        if len(gates) >= _SWEEP_ABOVE:
            now = time.monotonic()
            for key in [k for k, g in gates.items() if g.idle() and not g.silent(now)]:
                del gates[key]
        gate = gates[destination] = _Gate(limit)
    gate.limit = limit  # the setting as it is now
    return gate


def _forget_if_idle(destination: Destination, gate: _Gate) -> None:
    """An idle gate is dropped, unless it remembers that its destination is silent."""
    gates = _gates.get(asyncio.get_running_loop(), {})
    if gate.idle() and not gate.silent(time.monotonic()) and gates.get(destination) is gate:
        del gates[destination]


def _hand_over(gate: _Gate) -> None:
    """Free slots go to the waiters in arrival order (the slot passes with the future)."""
    while gate.waiters and gate.in_flight < gate.limit:
        waiter = gate.waiters.popleft()
        if not waiter.done():
            gate.in_flight += 1
            waiter.set_result(None)


def _turn_silent(gate: _Gate, reason: str) -> None:
    gate.silent_at = time.monotonic()
    while gate.waiters:
        waiter = gate.waiters.popleft()
        if not waiter.done():
            waiter.set_exception(NotSent(reason))


async def acquire(
    destination: Destination, limit: int, *, wait: float, probe: bool = False
) -> None:
    """Take a slot for one POST (give it back with `release`), waiting for one at most
    `wait` seconds; or raise NotSent. A `probe` may go to a silent destination beside the
    one probe in flight (a resend the merchant asked for)."""
    gate = _gate(destination, limit)
    gate.users += 1
    try:
        await _take(gate, wait, probe=probe)
    except BaseException:
        gate.users -= 1
        _forget_if_idle(destination, gate)
        raise


async def _take(gate: _Gate, wait: float, *, probe: bool) -> None:
    if gate.silent(time.monotonic()):
        if gate.in_flight >= (gate.limit if probe else PROBES):
            raise NotSent(
                "the destination let an earlier attempt run to the deadline; one attempt "
                "at a time goes to it until one is answered in time"
            )
        gate.in_flight += 1
        return
    if gate.in_flight < gate.limit and not gate.waiters:
        gate.in_flight += 1
        return
    if time.monotonic() - gate.answered_at >= wait:
        raise NotSent(
            f"{gate.in_flight} POSTs to the destination are in flight and it answered none "
            f"for {wait:g} s"
        )
    waiter = asyncio.get_running_loop().create_future()
    gate.waiters.append(waiter)
    try:
        await asyncio.wait((waiter,), timeout=wait)
    except asyncio.CancelledError:
        _abandon(gate, waiter)
        raise
    if not waiter.done():
        _abandon(gate, waiter)
        raise NotSent(
            f"no free slot within {wait:g} s: {gate.in_flight} POSTs to the destination "
            "are in flight"
        )
    waiter.result()  # NotSent when the destination turned silent meanwhile


def _abandon(gate: _Gate, waiter: asyncio.Future[None]) -> None:
    """A waiter leaves: a slot handed over to it meanwhile goes to the next one."""
    if not waiter.done():
        gate.waiters.remove(waiter)
        waiter.cancel()
    elif not waiter.cancelled() and waiter.exception() is None:
        gate.in_flight -= 1
        _hand_over(gate)


def release(destination: Destination, *, answered: bool, ran_to_deadline: bool) -> None:
    """Give the slot back, with what the POST showed of the destination: `answered` (an
    answer in time, whatever its status) or `ran_to_deadline` (no answer in time)."""
    gate = _gates.get(asyncio.get_running_loop(), {}).get(destination)
    if gate is None:  # a gate lives while it has users: never
        return
    gate.in_flight -= 1
    gate.users -= 1
    if answered:
        gate.answered_at = time.monotonic()
        gate.silent_at = None
    elif ran_to_deadline:
        _turn_silent(
            gate,
            "another attempt to the destination ran to the deadline; one attempt at a time "
            "goes to it until one is answered in time",
        )
    if not gate.silent(time.monotonic()):
        _hand_over(gate)
    _forget_if_idle(destination, gate)


def forget() -> None:
    """Drop every gate of the running loop (tests start each from a clean slate)."""
    _gates.pop(asyncio.get_running_loop(), None)
