"""The account statement and one PIX key's transactions, shaped as docs/transactions.md shows.

Dates are days of the gateway's time zone (Brasília by default): `startDate` from
00:00, `endDate` through 23:59:59.999. The service answers the stored rows of the page;
the API shapes them (`ledger.schemas.ListedTransaction.from_row`), with the
labels and masking of `core/`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from uuid import UUID
from zoneinfo import ZoneInfo

from pixgate.core.db.replica import PRIMARY, Read
from pixgate.core.errors import NotFound, ValidationFailed
from pixgate.core.pix.keys import ANY_KEY_FORM, detect_key_type, normalize_key
from pixgate.core.timestamps import is_iso_date, is_iso_date_time
from pixgate.ledger.queries import transactions as rows
from pixgate.ledger.queries.transactions import Transaction
from pixgate.runtime import Runtime

MAX_RANGE_DAYS = 31
PIX_KEY_MAX_RESULTS = 1000
COUNT_CAP = 10_000
"""`total` is exact up to this many matches; past it, `hasNext` still tells the truth."""


@dataclass(frozen=True, slots=True)
class ListQuery:
    page: int = 1
    size: int = 20
    status: str | None = None
    type: str | None = None
    start_date: str | None = None
    end_date: str | None = None
    external_id: str | None = None
    end_to_end_id: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Transaction]
    page: int
    size: int
    total: int
    more: bool
    """A row exists past this page (fetched as one look-ahead row)."""
    read: Read = PRIMARY
    """Where the rows came from: a standby may be a little behind (`Runtime.reads`)."""


async def statement(rt: Runtime, account_id: int, query: ListQuery) -> Page:
    start, end = _window(rt, query, default_days=MAX_RANGE_DAYS)
    filters = rows.Filters(
        account_id=account_id,
        start=start,
        end=end,
        status=query.status,
        operation=query.type,
        external_id=query.external_id,
        end_to_end_id=query.end_to_end_id,
    )
    offset = (query.page - 1) * query.size
    async with rt.reads() as (conn, read):
        found = await rows.page(conn, filters, offset=offset, limit=query.size + 1)
        total = await rows.count(conn, filters, cap=COUNT_CAP)
    return _page(found, query, total, room=query.size, read=read)


async def by_pix_key(rt: Runtime, account_id: int, pix_key: str, query: ListQuery) -> Page:
    """At most 1000 results in all: `total` stops there and later pages are empty."""
    key_type = detect_key_type(pix_key)
    if key_type is None:
        raise ValidationFailed([f"pixKey must be {ANY_KEY_FORM}"])
    start, end = _window(rt, query, default_days=30)
    filters = rows.Filters(
        account_id=account_id,
        start=start,
        end=end,
        status=query.status,
        operation=query.type,
        pix_key=normalize_key(pix_key, key_type),
    )
    offset = (query.page - 1) * query.size
    room = max(0, min(query.size, PIX_KEY_MAX_RESULTS - offset))
    async with rt.reads() as (conn, read):
        found = await rows.page(conn, filters, offset=offset, limit=room + 1) if room else []
        total = await rows.count(conn, filters, cap=PIX_KEY_MAX_RESULTS)
    more = len(found) > room and offset + room < PIX_KEY_MAX_RESULTS
    return _page(found, query, total, room=room, more=more, read=read)


async def get(rt: Runtime, account_id: int, transaction_id: UUID) -> Transaction:
    """One of the account's transactions by its transactionId; another account's is
    NotFound, as an unknown one is."""
    async with rt.db.connection() as conn:
        found = await rows.by_public_id(conn, account_id, transaction_id)
    if found is None:
        raise NotFound("transaction not found")
    return found


def _page(
    found: list[Transaction],
    query: ListQuery,
    total: int,
    *,
    room: int,
    read: Read,
    more: bool | None = None,
) -> Page:
    more = len(found) > room if more is None else more
    return Page(found[:room], query.page, query.size, total, more, read)


def _window(rt: Runtime, query: ListQuery, *, default_days: int) -> tuple[datetime, datetime]:
    zone = ZoneInfo(rt.settings.timezone)
    today = rt.clock.now().astimezone(zone).date()
    end = _parse_date(query.end_date, "endDate", zone) or today
    try:
        start = _parse_date(query.start_date, "startDate", zone)
        start = start or end - timedelta(days=default_days)
        if end < start:
            raise ValidationFailed(["endDate must not be before startDate"])
        if (end - start).days > MAX_RANGE_DAYS:
            raise ValidationFailed(
                [f"the interval between startDate and endDate is above {MAX_RANGE_DAYS} days"]
            )
        # In UTC here, as PostgreSQL gets them: the day after 9999-12-31, or 31 days before
        # 0001-01-01, would otherwise overflow later, inside the statement (a 500).
        return (
            datetime.combine(start, time.min, zone).astimezone(UTC),
            datetime.combine(end + timedelta(days=1), time.min, zone).astimezone(UTC),
        )
    except OverflowError as exc:
        raise ValidationFailed(
            ["startDate and endDate must leave a day's margin within the years 1 to 9999"]
        ) from exc


def _parse_date(value: str | None, field: str, zone: ZoneInfo) -> date | None:
    """An ISO 8601 date (YYYY-MM-DD); a date-time is taken for its date in the gateway's zone
    (one without an offset is a time of that zone). No other form: `date.fromisoformat`
    would also read `20261124` or a week date."""
    if value is None:
        return None
    try:
        if is_iso_date(value):
            return date.fromisoformat(value)
        if is_iso_date_time(value):
            at = datetime.fromisoformat(value)
            return (at.astimezone(zone) if at.tzinfo is not None else at).date()
    except (ValueError, OverflowError):
        pass  # no such day (2026-02-30), or none in the gateway's zone (0001-01-01T00:00+14:00)
    raise ValidationFailed(
        [f"{field} must be an ISO 8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDThh:mm:ssZ)"]
    )
