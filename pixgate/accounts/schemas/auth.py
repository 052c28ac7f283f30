"""Token endpoint bodies."""

from __future__ import annotations

import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from pixgate.core.http.error_schemas import ErrorEnvelope
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


class OAuthTokenResponse(TokenResponse):
    """The answer to the OAuth 2.0 form (RFC 6749 5.1): 200, with the scopes granted."""

    scope: str = Field(description="the scopes granted, space-separated (RFC 6749 3.3)")


class OAuthErrorBody(ApiModel):
    """An OAuth 2.0 form request's refusal (RFC 6749 5.2), snake_case on the wire."""

    model_config = ConfigDict(alias_generator=None)

    error: Literal["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"]
    error_description: str


class TokenError(RootModel[ErrorEnvelope | OAuthErrorBody]):
    """A refusal of the token endpoint: the spec's envelope to a JSON request, RFC 6749's
    error to a form request."""
