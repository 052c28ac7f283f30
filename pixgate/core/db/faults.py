"""Where a driver fault becomes pixgate's error, once: the pool's connections and the
statement batches raise these, and nothing above `core/db/` names asyncpg's exceptions.

- The database cannot be reached (down, restarting, out of connections, a connection lost
  mid-statement): `DatabaseUnavailable`, the 503 a client sends again.
- The database broke a deadlock or a serialization conflict by rolling the transaction back:
  `TryAgain`, nothing was written.
- A sum it cannot store (a bigint overflow, the ledger's refusal past an account's largest
  balance): `TotalOutOfRange`, the client's 400.
- A database function refused, with a SQLSTATE of pixgate's own (class `PX`, written in each
  feature's `sql/` files): `Refused`, which the feature's queries module turns into its
  domain error, by state, with `Refused.as_error` (the one refusal convention).
- A unique constraint refused a row: `Duplicate`, naming the constraint.

Anything else is a bug and stays what it is (a 500 with its stack trace in the log).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import asyncpg

from pixgate.core.errors import DatabaseUnavailable, TotalOutOfRange, TryAgain

UNAVAILABLE: tuple[type[Exception], ...] = (
    OSError,  # refused, reset, unreachable: the server is down or restarting
    TimeoutError,  # no connection within the connect timeout
    asyncpg.PostgresConnectionError,  # a connection lost mid-statement
    asyncpg.exceptions.OperatorInterventionError,  # shutting down, starting up, crashed
    asyncpg.exceptions.TooManyConnectionsError,
    # A server shutting down sends its idle connections an error before it closes them;
    # asyncpg's protocol cannot take an error it did not ask for, and a statement sent on
    # such a connection before the close arrives raises this, without sending anything.
    asyncpg.exceptions.InternalClientError,
)
"""What the driver raises while the database cannot be reached. Nothing was committed by a
statement that raised one of these (a COMMIT that raised one may have landed, which is why
every write is idempotent by key)."""

LOST_RACE_STATES = frozenset({"40P01", "40001"})
"""Deadlock and serialization failure: the database rolled the transaction back."""
OUT_OF_RANGE_STATE = "22003"
"""A numeric value out of range: the statement wrote nothing."""
OWN_STATE_CLASS = "PX"
"""The SQLSTATE class of the refusals pixgate's database functions raise."""

OUT_OF_RANGE_MESSAGE = (
    "the operation would take a balance or a total past 92233720368547758.07, the most that "
    "can be kept; nothing was written"
)
"""What the client is told: the database's own message may name another account."""
UNAVAILABLE_MESSAGE = "the database cannot be reached; send the request again"
LOST_RACE_MESSAGE = "the request met a concurrent change; nothing was written"


class Refused(Exception):
    """A database function's refusal: nothing the statement wrote stays."""

    def __init__(self, sqlstate: str, message: str, detail: str | None) -> None:
        super().__init__(f"{sqlstate}: {message}")
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail

    def as_error(self, errors: Mapping[str, Callable[[Refused], Exception]]) -> Exception:
        """The domain error `errors` gives for this state; this refusal itself (a bug, a
        500) for a state the caller does not expect."""
        make = errors.get(self.sqlstate)
        return self if make is None else make(self)


class Duplicate(Exception):
    """A unique constraint refused the row; `constraint` names it."""

    def __init__(self, constraint: str, message: str) -> None:
        super().__init__(message)
        self.constraint = constraint


def from_state(sqlstate: str, message: str, detail: str | None = None) -> Exception | None:
    """Pixgate's error for a SQLSTATE (a batch element reports its state, not an exception);
    None for a state that is a bug."""
    if sqlstate in LOST_RACE_STATES:
        return TryAgain(LOST_RACE_MESSAGE)
    if sqlstate == OUT_OF_RANGE_STATE:
        return TotalOutOfRange(OUT_OF_RANGE_MESSAGE)
    if sqlstate.startswith(OWN_STATE_CLASS):
        return Refused(sqlstate, message, detail)
    return None


def translated(exc: BaseException) -> BaseException:
    """Pixgate's error for a driver fault; `exc` itself for anything else."""
    if isinstance(exc, UNAVAILABLE):
        return DatabaseUnavailable(UNAVAILABLE_MESSAGE)
    if isinstance(exc, asyncpg.UniqueViolationError):
        return Duplicate(exc.constraint_name or "", str(exc))
    if isinstance(exc, asyncpg.PostgresError) and exc.sqlstate:
        detail = getattr(exc, "detail", None)
        return from_state(exc.sqlstate, str(getattr(exc, "message", exc)), detail) or exc
    return exc
