"""Error bodies, as they appear in the OpenAPI document."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class SimpleError(BaseModel):
    statusCode: int
    message: str | list[str]
    error: str


class ErrorEnvelope(SimpleError):
    """Section 7.1: the body of errors of the token, cash-in and cash-out endpoints."""

    timestamp: str
    path: str
    method: str
    code: str = Field(description="stable machine-readable identifier; branch on it")
    userMessage: str
    details: dict[str, Any] | None = None
    errorId: str
    errorCode: str | None = Field(default=None, description="business errors; equals code")
