"""The API Pix lists (`GET /cob`, `GET /loc`): a time window and pages (`paginacao`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pixgate.core.errors import ValidationFailed

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
"""The document's `paginacao.itensPorPagina`: 100 unless asked, at most 1000."""


@dataclass(frozen=True, slots=True)
class Window:
    """`inicio` and `fim`: records created in [start, end], both ends included."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValidationFailed(["fim: must not be before inicio"])


@dataclass(frozen=True, slots=True)
class PageRequest:
    """`paginacao.paginaAtual` (from 0) and `paginacao.itensPorPagina`."""

    number: int = 0
    size: int = DEFAULT_PAGE_SIZE

    @property
    def offset(self) -> int:
        return self.number * self.size


@dataclass(frozen=True, slots=True)
class Paging:
    """The `paginacao` of an answer: the page asked for, and what there is in all."""

    number: int
    size: int
    pages: int
    total: int

    @classmethod
    def of(cls, asked: PageRequest, total: int) -> Paging:
        """At least one page (the document's minimum), even when nothing matches."""
        pages = max(1, -(-total // asked.size))
        return cls(number=asked.number, size=asked.size, pages=pages, total=total)
