"""Token endpoint bodies."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pixgate.core.http.schemas import ApiModel


class TokenRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    clientId: str = Field(
        description="UUID v4 issued with the credential", json_schema_extra={"format": "uuid"}
    )
    clientSecret: str = Field(min_length=8, max_length=64)

    @field_validator("clientId")
    @classmethod
    def _uuid_v4(cls, value: str) -> str:
        try:
            parsed = uuid.UUID(value)
        except ValueError as exc:
            raise ValueError("clientId must be a UUID v4") from exc
        if parsed.version != 4 or len(value) != 36:
            raise ValueError("clientId must be a UUID v4")
        return value


class TokenResponse(ApiModel):
    """OAuth 2.0's member names (RFC 6749 5.1), snake_case on the wire: no alias generator."""

    model_config = ConfigDict(alias_generator=None)

    access_token: str
    token_type: str = "Bearer"  # noqa: S105 - a token type, not a secret
    expires_in: int = Field(description="seconds; 1800 by default")
