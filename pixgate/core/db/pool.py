"""The asyncpg pool and the two ways services use it: a transaction, or a plain read."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeAlias

import asyncpg
import orjson

from pixgate.core.db import faults
from pixgate.core.db.batches import Batcher, Item, Result, Statement
from pixgate.core.db.notify import Notifier, take_requests
from pixgate.core.db.row_queue import RowQueues
from pixgate.core.errors import DatabaseUnavailable
from pixgate.core.money import json_number

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection: TypeAlias = PoolConnectionProxy[asyncpg.Record]
    RawConnection: TypeAlias = asyncpg.Connection[asyncpg.Record]
    Pool: TypeAlias = asyncpg.Pool[asyncpg.Record]
else:
    Connection = RawConnection = asyncpg.Connection
    Pool = asyncpg.Pool


class _Connection(asyncpg.Connection):
    """The pool's connections: a server's error on a statement becomes pixgate's here, once
    (`faults.translated`); a connection fault is left to `Database`, which knows whether the
    connection is gone."""

    async def execute(self, query: str, *args: Any, **kwargs: Any) -> str:
        try:
            return await super().execute(query, *args, **kwargs)
        except asyncpg.PostgresError as exc:
            _reraise(exc)

    async def executemany(self, command: str, args: Any, **kwargs: Any) -> None:
        try:
            await super().executemany(command, args, **kwargs)
        except asyncpg.PostgresError as exc:
            _reraise(exc)

    async def fetch(self, query: str, *args: Any, **kwargs: Any) -> list[Any]:
        try:
            rows: list[Any] = await super().fetch(query, *args, **kwargs)
            return rows
        except asyncpg.PostgresError as exc:
            _reraise(exc)

    async def fetchrow(self, query: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().fetchrow(query, *args, **kwargs)
        except asyncpg.PostgresError as exc:
            _reraise(exc)

    async def fetchval(self, query: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().fetchval(query, *args, **kwargs)
        except asyncpg.PostgresError as exc:
            _reraise(exc)


_FAULTS: tuple[type[Exception], ...] = (*faults.UNAVAILABLE, asyncpg.PostgresError)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """The database out of reach, or a fault at COMMIT, as pixgate's error."""
    try:
        yield
    except _FAULTS as exc:
        error = faults.translated(exc)
        if error is exc:
            raise
        raise error from exc


def _reraise(exc: asyncpg.PostgresError) -> NoReturn:
    """A statement's server error as pixgate's; a connection fault unchanged, for `Database`
    to judge, and a bug (any other state) as it is."""
    error = exc if isinstance(exc, faults.UNAVAILABLE) else faults.translated(exc)
    if error is exc:
        raise exc
    raise error from exc


async def _connect(*args: Any, **kwargs: Any) -> RawConnection:
    """A new pool connection. A server that answers but refuses the connection (its database
    not accepting connections, being dropped or renamed) is as out of reach as a closed port,
    whatever SQLSTATE it gives: the request answers 503, not 500. Only the connect is judged
    so: the same state on a statement (55000 is also a sequence's `currval` misuse) is a bug."""
    try:
        connection: RawConnection = await asyncpg.connect(*args, **kwargs)
    except asyncpg.PostgresError as exc:
        raise DatabaseUnavailable(faults.UNAVAILABLE_MESSAGE) from exc
    return connection


ARRAY_TYPES = (
    "bool", "int2", "int4", "int8", "numeric", "float8", "uuid", "date", "timestamptz",
    "varchar", "bytea", "jsonb",
)  # fmt: skip
"""The element types of the arrays the gateway's statements send and read (the batches send
their elements as arrays), learnt by each pool connection as it opens (`_learn_types`). A
statement that sends or reads an array of another type needs it added here: else, behind
PgBouncer, its first use on each connection waits for the catalog query run with JIT."""


async def _init_connection(conn: RawConnection) -> None:
    """jsonb columns come and go as Python objects, encoded by orjson (fast, strict; an
    amount, a `Decimal`, as the exact number it is)."""
    await conn.set_type_codec(
        "jsonb",
        encoder=lambda v: b"\x01" + orjson.dumps(v, default=json_number),
        decoder=lambda b: orjson.loads(b[1:]),
        schema="pg_catalog",
        format="binary",
    )
    await _learn_types(conn)


async def _learn_types(conn: RawConnection) -> None:
    """The codecs of `ARRAY_TYPES`' arrays, learnt in one transaction before any statement
    needs them.

    asyncpg learns an array type from the server's catalog the first time a statement of
    the connection uses it, with JIT turned off for that query (a session setting, changed
    by one statement and restored by another): JIT compiles the catalog query for a second
    or more. Behind PgBouncer in transaction mode, statements outside a transaction may each
    go to another server connection, so the query ran with JIT on, and the first cash-outs
    on every new pool connection waited 1-1.7 s for it (a p99 twenty times the p50). Inside
    one transaction the three statements share one server connection, and the hot
    statements find every codec already known."""
    async with conn.transaction():
        await conn.fetchrow("SELECT " + ", ".join(f"NULL::{t}[]" for t in ARRAY_TYPES))


async def _keep_session(conn: RawConnection) -> None:
    """Release a connection without asyncpg's reset query (one round trip per release).

    The default reset runs `pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL`
    every time a connection goes back to the pool: a second round trip for a one-query
    read. pixgate leaves no session state behind: locks are `pg_advisory_xact_lock`,
    cursors live inside transactions, settings are `SET LOCAL`, and the worker's listener
    unlistens itself. asyncpg still rolls back a transaction left open and drops listener
    callbacks before calling this. Code that needs session state must undo it itself.
    """


def lost(conn: Connection) -> bool:
    """Whether the server closed `conn`. Ask this, not `conn.is_closed()`: the pool takes a
    closed connection back at once, which detaches the proxy its user still holds, and
    asking a detached proxy anything raises InterfaceError."""
    try:
        return conn.is_closed()
    except asyncpg.InterfaceError:
        return True


def _gone(conn: Connection, exc: Exception) -> bool:
    """Whether `exc`, raised on `conn`, means the connection is gone, not a misuse.

    asyncpg reports a lost connection in two more ways than ConnectionDoesNotExistError. A
    statement sent on a connection closed meanwhile (asyncpg checks before sending; the
    ROLLBACK after a lost statement is one) raises a bare InterfaceError. And a connection
    that got a shutting-down server's unasked-for error stays stuck waiting for the end of
    it: its next statement raises InternalClientError ("another operation is in progress")
    if it comes before the close. That connection is unusable: it is dropped here at once,
    so the pool makes a new one."""
    if isinstance(exc, asyncpg.exceptions.InternalClientError):
        with contextlib.suppress(asyncpg.InterfaceError):  # already back in the pool
            conn.terminate()
        return True
    return lost(conn)


_MAYBE_GONE = (asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError)


class Database:
    """Owns the pool; `begin()` is the unit of work every service function opens once."""

    def __init__(self, pool: Pool, listen_to: Listening | None = None, lanes: int = 2) -> None:
        self.pool = pool
        self._lanes = lanes
        self._turns = asyncio.Semaphore(pool.get_max_size())
        """Callers take a pool connection in the order they asked for one. asyncpg's pool
        hands a released connection to the first waiter, but a caller that asks before that
        waiter has run (the releaser itself, asking again) takes it first, and the waiter
        goes to the back of the line: under load a request could wait seconds while later
        ones went ahead. This semaphore queues them first, in order (docs/performance.md,
        "Pool connections in arrival order")."""
        self._queues = RowQueues()
        self._batchers: dict[Statement[Any, Any], Batcher[Any, Any]] = {}
        self.notifier = Notifier(pool)
        self._listen_to = listen_to or PoolListening()

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        min_size: int = 2,
        max_size: int = 20,
        connect_timeout: float = 5.0,
        behind_pooler: bool = False,
        direct_dsn: str | None = None,
        lanes: int = 2,
    ) -> Database:
        """The pool; a connection it cannot make within `connect_timeout` raises TimeoutError
        (one of UNAVAILABLE), so no caller waits for an unreachable server longer than that.

        `behind_pooler`: `dsn` is a pooler in transaction mode (PgBouncer), which gives each
        transaction whichever server connection is free, so a statement prepared in one
        transaction may be missing in the next: no statement is kept (asyncpg then prepares
        each one unnamed, in the same exchange as its execution). LISTEN needs a session of
        its own too: it goes to `direct_dsn`, PostgreSQL itself, or, without one, is not
        used (the workers poll). `lanes`: see `lane`."""
        pool = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            connect=_connect,
            init=_init_connection,
            statement_cache_size=0 if behind_pooler else 512,
            reset=_keep_session,
            timeout=connect_timeout,
            connection_class=_Connection,
        )
        assert pool is not None
        if direct_dsn is not None:
            listen_to: Listening = DirectListening(direct_dsn, connect_timeout)
        else:
            listen_to = NoListening() if behind_pooler else PoolListening()
        return cls(pool, listen_to, lanes)

    def lane(self, row_id: int) -> tuple[str, int]:
        """The queue (`queued`) and batch (`batcher`) of a statement that writes the hot row
        `row_id` of the accounts table: its rows are spread over this many lanes by id, and
        each lane has one statement in flight at a time, which takes all that waited for
        its rows meanwhile, whatever their accounts (docs/performance.md, "Write lanes")."""
        return ("lane", row_id % self._lanes)

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[Connection]:
        """A connection inside a transaction: committed on exit, rolled back on error."""
        with _translated():
            async with self._turns, self.pool.acquire() as conn:
                try:
                    async with conn.transaction():
                        yield conn
                except _MAYBE_GONE as exc:
                    take_requests(conn)
                    if _gone(conn, exc):
                        raise DatabaseUnavailable(faults.UNAVAILABLE_MESSAGE) from exc
                    raise
                except BaseException:
                    take_requests(conn)
                    raise
                self._wake(conn)

    @asynccontextmanager
    async def queued(self, key: Hashable, *, urgent: bool = False) -> AsyncIterator[Connection]:
        """A plain connection for one statement that locks the hot row `key` and commits on
        its own, after this process's earlier statements on that row (see `row_queue`);
        `urgent` ones (finishing accepted work) before the others.

        The queue is taken before the pool connection, so waiting holds none and the pool
        stays free for the work that is not queued (the job worker's reads, above all). No
        code waits for a queue while it holds a pool connection, so a holder's wait for the
        pool always ends."""
        await self._queues.enter(key, urgent=urgent)
        try:
            async with self.connection() as conn:
                yield conn
        finally:
            self._queues.leave(key)

    def batcher(self, statement: Statement[Item, Result]) -> Batcher[Item, Result]:
        """This pool's one batcher for `statement`: statements for one key (a hot row, or
        reads of one table) sent together while one is in flight (see `batches`)."""
        batcher = self._batchers.get(statement)
        if batcher is None:
            batcher = self._batchers[statement] = Batcher(self, statement)
        return batcher

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection for reads, or for single statements that commit on their own."""
        with _translated():
            async with self._turns, self.pool.acquire() as conn:
                try:
                    yield conn
                except _MAYBE_GONE as exc:
                    if _gone(conn, exc):
                        raise DatabaseUnavailable(faults.UNAVAILABLE_MESSAGE) from exc
                    raise
                finally:
                    self._wake(conn)

    def listening(
        self, channel: str, callback: Any
    ) -> AbstractAsyncContextManager[Callable[[], bool]]:
        """LISTEN on `channel` while the block runs (the job worker's wake-ups); the block
        gets a function that tells whether the listening session is still there."""
        return self._listen_to.listening(self.pool, channel, callback)

    def _wake(self, conn: Connection) -> None:
        requests = take_requests(conn)
        if requests:
            self.notifier.notify(requests)

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        with _translated():
            return await self.pool.fetchrow(query, *args)

    async def close(self) -> None:
        await self.notifier.close()
        await self.pool.close()


class Listening(Protocol):
    """Where a LISTEN goes."""

    def listening(
        self, pool: Pool, channel: str, callback: Any
    ) -> AbstractAsyncContextManager[Callable[[], bool]]: ...


class PoolListening:
    """On one of the pool's connections, given back after: PostgreSQL is behind the pool."""

    @asynccontextmanager
    async def listening(
        self, pool: Pool, channel: str, callback: Any
    ) -> AsyncIterator[Callable[[], bool]]:
        with _translated():
            listener = await pool.acquire()
        try:
            with _translated():
                await listener.add_listener(channel, callback)
            yield lambda: not lost(listener)
        finally:
            with contextlib.suppress(Exception):
                await listener.remove_listener(channel, callback)
            with contextlib.suppress(Exception):
                await pool.release(listener)


@dataclass(frozen=True, slots=True)
class DirectListening:
    """On a connection of its own to PostgreSQL itself, past a transaction pooler (which
    would give the LISTEN's server connection to other clients between transactions)."""

    dsn: str
    connect_timeout: float

    @asynccontextmanager
    async def listening(
        self, pool: Pool, channel: str, callback: Any
    ) -> AsyncIterator[Callable[[], bool]]:
        with _translated():
            listener = await _connect(self.dsn, timeout=self.connect_timeout)
        try:
            with _translated():
                await listener.add_listener(channel, callback)
            yield lambda: not listener.is_closed()
        finally:
            with contextlib.suppress(Exception):
                await listener.close(timeout=self.connect_timeout)


class NoListening:
    """Behind a transaction pooler with no direct URL: no LISTEN; the worker's poll (and the
    wake-ups of its own process's commits) finds the jobs."""

    @asynccontextmanager
    async def listening(
        self, pool: Pool, channel: str, callback: Any
    ) -> AsyncIterator[Callable[[], bool]]:
        yield lambda: True
