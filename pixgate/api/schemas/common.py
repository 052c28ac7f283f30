"""Shapes shared across routers: timestamps on the wire, and the values several bodies and
queries take (amounts, documents, instants), each described once for the OpenAPI document."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from pixgate.timestamps import DATE_TIME_PATTERN, is_iso_date_time, iso

__all__ = [
    "DOCUMENT",
    "Amount",
    "ApiModel",
    "AwareTimestamp",
    "BuiltModel",
    "Timestamp",
    "example",
    "iso",
]


class ApiModel(BaseModel):
    """The base of every body the API answers: fields are snake_case in Python and camelCase
    on the wire, so routes build answers from domain objects without spelling JSON keys."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True
    )


class BuiltModel(ApiModel):
    """An answer built from values the service already typed, by one `model_validate` of a
    dict keyed by field name (in pydantic-core: cheaper than `model_construct`, which runs in
    Python, on the hot routes). Validated by name only: nothing parses these from the wire."""

    model_config = ConfigDict(validate_by_alias=False, validate_by_name=True)


EXAMPLE_CPF = "52998224725"
EXAMPLE_PAYER = {"name": "Maria Souza", "document": EXAMPLE_CPF}


def example(value: dict[str, Any]) -> dict[str, Any]:
    """`json_schema_extra` of a request model: one valid body, shown by /docs ("Try it out"
    starts from it) and sent first by the hostile-input sweep, so it reaches the service."""
    return {"examples": [value]}


AMOUNT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "number", "minimum": 0.01, "multipleOf": 0.01},
        {"type": "string", "pattern": r"^[0-9]{1,17}(\.[0-9]{1,2})?$"},
    ],
    "description": "BRL, at least 0.01, at most 2 decimal places (never rounded: more is "
    "refused); a JSON number, or the same as a string.",
}
Amount = Annotated[Decimal, WithJsonSchema(AMOUNT_SCHEMA)]
"""A BRL amount as the OpenAPI document shows it. Checked by the service, not here, so each
route answers its own code (PIX_INVALID_AMOUNT on cash-out, a field error elsewhere)."""

_SEP = "[./ -]*"
DOCUMENT_PATTERN = (
    rf"^(?:{_SEP}[0-9]){{11}}{_SEP}$"
    rf"|^(?:{_SEP}[0-9A-Za-z]){{12}}(?:{_SEP}[0-9]){{2}}{_SEP}$"
)
"""CPF (11 digits) or CNPJ (12 of `[0-9A-Z]` then 2 digits: the alphanumeric CNPJ), in any
case, with the punctuation `domain.documents.only_document_chars` drops (`.`, `-`, `/`,
space) anywhere."""
DOCUMENT: dict[str, Any] = {"pattern": DOCUMENT_PATTERN}
"""`json_schema_extra` of a document field; check digits are the service's to verify."""


def _utc_representable(value: datetime) -> datetime:
    """PostgreSQL gets every instant through UTC; one outside Python's years 1-9999 there
    (`0001-01-01T00:00+14:00`) would fail while being sent, a 500. Refused as a field error."""
    try:
        (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("the instant is out of range once converted to UTC") from exc
    return value


def _iso_date_time(value: object) -> object:
    """The documented text only: pydantic would read a number (`0`, `-1`, `1700000000`,
    `20261124`) as seconds since the epoch, and a date alone as its midnight."""
    if isinstance(value, str) and is_iso_date_time(value):
        return value
    raise PydanticCustomError(
        "iso_date_time", "must be an ISO 8601 date-time, such as 2026-11-24T10:00:00Z"
    )


DATE_TIME_SCHEMA = {"type": "string", "format": "date-time", "pattern": DATE_TIME_PATTERN}
Timestamp = Annotated[
    datetime,
    BeforeValidator(_iso_date_time),
    AfterValidator(_utc_representable),
    WithJsonSchema(DATE_TIME_SCHEMA),
]
"""An ISO 8601 date-time (with or without an offset: UTC) that PostgreSQL can store: every
instant a request carries, in a query or a body."""
AwareTimestamp = Annotated[
    AwareDatetime,
    BeforeValidator(_iso_date_time),
    AfterValidator(_utc_representable),
    WithJsonSchema(DATE_TIME_SCHEMA),
]
"""The same, with its offset required."""
