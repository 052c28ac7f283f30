"""Query parameters several list routes share, with the bounds that keep them storable."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import WithJsonSchema

from pixgate.core.http.schemas import AwareTimestamp
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

Inicio = Annotated[
    AwareTimestamp,
    Query(description="RFC 3339 date-time with its offset: from this instant on (included)"),
]
Fim = Annotated[
    AwareTimestamp,
    Query(description="RFC 3339 date-time with its offset: up to this instant (included)"),
]
PaginaAtual = Annotated[
    int,
    Query(
        alias="paginacao.paginaAtual",
        ge=0,
        le=MAX_PAGE,
        description="the page to answer, counted from 0",
    ),
]
ItensPorPagina = Annotated[
    int,
    Query(alias="paginacao.itensPorPagina", ge=1, le=1000, description="items per page"),
]
"""The API Pix's list parameters (`inicio`, `fim`, `paginacao.*`): a page counted from 0,
100 items by default and at most 1,000."""
