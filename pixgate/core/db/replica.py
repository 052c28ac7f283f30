"""Reads that may come from a standby: the account statement, the transaction lists and the
event list, none of which moves money.

A standby is read only while it is close behind the primary: its lag, measured on the
standby at most once a second, must be within `read_max_lag_s`. Otherwise, and when the
standby cannot be reached, the primary answers. Each answer says which one it came from and
how far behind that was (`Read`), so that a client sees the lag it got.

The lag is 0 when the standby has replayed everything it received and its WAL receiver is
streaming. Otherwise it is the time since the last transaction it replayed. A standby that
does not stream (its primary gone, or it was promoted) is not read, and its connections are
replaced: with a URL that names every node and `target_session_attrs=standby`, reads find
the standby again after a failover.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Literal

from pixgate.core.db.pool import Connection, Database
from pixgate.core.errors import DatabaseUnavailable

LAG_CHECK_S = 1.0
"""How long a lag measured on the standby is trusted before it is measured again."""

LAG = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN NULL
    WHEN NOT EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN NULL
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp()))
END
"""
"""Seconds the standby is behind; NULL when it is not a streaming standby."""


@dataclass(frozen=True, slots=True)
class Read:
    """Where a read came from: "primary" (lag 0) or "standby", and how far behind it was."""

    source: Literal["primary", "standby"]
    lag_s: float


PRIMARY = Read("primary", 0.0)


class Replica:
    """A standby's pool, and its lag as last measured."""

    def __init__(self, db: Database, max_lag_s: float) -> None:
        self.db = db
        self.max_lag_s = max_lag_s
        self._lag: float | None = None
        self._measured_at = float("-inf")

    async def lag(self) -> float | None:
        """Seconds behind the primary; None when it is not a streaming standby or is out of
        reach."""
        if time.monotonic() - self._measured_at >= LAG_CHECK_S:
            self._measured_at = time.monotonic()
            try:
                async with self.db.connection() as conn:
                    found = await conn.fetchval(LAG)
            except DatabaseUnavailable:
                self._lag = None
            else:
                self._lag = None if found is None else float(found)
                if found is None:
                    await self._reconnect()
        return self._lag

    async def _reconnect(self) -> None:
        """The server answered, but is no standby (promoted in a failover): the next
        connections are made anew, so that a URL naming every node with
        `target_session_attrs=standby` finds the one that is a standby now."""
        await self.db.pool.expire_connections()

    def forget(self) -> None:
        """Measure the lag again on the next read (the standby failed a connection)."""
        self._measured_at = float("-inf")

    async def close(self) -> None:
        await self.db.close()


@asynccontextmanager
async def reading(
    primary: Database, replica: Replica | None
) -> AsyncIterator[tuple[Connection, Read]]:
    """A connection to the standby while its lag is within bounds, else to the primary (also
    when no connection to the standby can be made)."""
    async with AsyncExitStack() as stack:
        lag = None if replica is None else await replica.lag()
        if replica is not None and lag is not None and lag <= replica.max_lag_s:
            try:
                conn = await stack.enter_async_context(replica.db.connection())
            except DatabaseUnavailable:
                replica.forget()
            else:
                yield conn, Read("standby", lag)
                return
        yield await stack.enter_async_context(primary.connection()), PRIMARY
