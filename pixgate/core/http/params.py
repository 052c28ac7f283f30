"""Query parameters several list routes share, with the bounds that keep them storable."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import WithJsonSchema

from pixgate.core.timestamps import DATE_PATTERN, DATE_TIME_PATTERN

MAX_PAGE = 2_147_483_647
"""PostgreSQL's largest `integer`. Unbounded, a page of 10^18 made `(page - 1) * size` overflow
the `bigint` of OFFSET (a 500); at this bound the offset stays far inside it for any size."""

Page = Annotated[int, Query(ge=1, le=MAX_PAGE, description="1-indexed page number")]
PageSize = Annotated[int, Query(ge=1, le=100, description="items per page, at most 100")]

Day = Annotated[
    str | None,
    Query(
        description="ISO 8601 date (YYYY-MM-DD), or a date-time taken for its date in the "
        "gateway's time zone; startDate to endDate spans at most 31 days"
    ),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "format": "date", "pattern": DATE_PATTERN},
                {"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN},
            ]
        }
    ),
]
"""`startDate`/`endDate` of the statements, read in the gateway's time zone by
`ledger.service.transactions` (which the dashboard's statement shares): only these two forms."""
