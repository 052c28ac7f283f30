"""Query parameters every list of the API Pix shares: `inicio`, `fim` (RFC 3339) and
`paginacao.paginaAtual`, `paginacao.itensPorPagina`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Query

from pixgate.charges.rules.pages import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageRequest, Window
from pixgate.core.http.schemas import Timestamp, iso


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


async def window(
    inicio: Annotated[Timestamp, Query(description="created at or after (RFC 3339)")],
    fim: Annotated[Timestamp, Query(description="created at or before (RFC 3339)")],
) -> Window:
    return Window(_utc(inicio), _utc(fim))


async def page_request(
    pagina_atual: Annotated[int, Query(alias="paginacao.paginaAtual", ge=0, le=1_000_000)] = 0,
    itens_por_pagina: Annotated[
        int, Query(alias="paginacao.itensPorPagina", ge=1, le=MAX_PAGE_SIZE)
    ] = DEFAULT_PAGE_SIZE,
) -> PageRequest:
    return PageRequest(pagina_atual, itens_por_pagina)


TimeWindow = Annotated[Window, Depends(window)]
Pages = Annotated[PageRequest, Depends(page_request)]


def window_echo(found: Window) -> tuple[str, str]:
    """`parametros.inicio` and `parametros.fim` of an answer."""
    return iso(found.start) or "", iso(found.end) or ""
