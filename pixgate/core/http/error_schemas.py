"""Error bodies, as they appear in the OpenAPI document."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pixgate.core.http.schemas import ApiModel


class SimpleError(ApiModel):
    """The Central-Bank-style family's body."""

    status_code: int
    message: str | list[str]
    error: str


class ApiError(SimpleError):
    """The general envelope: every route outside the spec's two fixed shapes."""

    message: str
    code: str = Field(description="stable machine-readable identifier; branch on it")
    timestamp: str
    path: str
    method: str
    error_id: str = Field(description="the request id (X-Request-Id); quote it to support")
    details: dict[str, Any] | None = Field(
        default=None, description="`violations` (per-field failures) and error specifics"
    )


class ErrorEnvelope(SimpleError):
    """The general envelope (docs/errors.md): errors of the token, cash-in and cash-out routes."""

    timestamp: str
    path: str
    method: str
    code: str = Field(description="stable machine-readable identifier; branch on it")
    user_message: str
    details: dict[str, Any] | None = None
    error_id: str
    error_code: str | None = Field(default=None, description="business errors; equals code")


class Violacao(BaseModel):
    razao: str
    propriedade: str


class Problem(BaseModel):
    """The Central Bank's API Pix errors: RFC 7807 (`application/problem+json`)."""

    type: str
    title: str
    status: int
    detail: str | None = None
    correlationId: str | None = None
    violacoes: list[Violacao] | None = None
