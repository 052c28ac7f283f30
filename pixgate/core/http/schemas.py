"""Shapes shared across routers: timestamps on the wire, and the values several bodies and
queries take (amounts, documents, instants), each described once for the OpenAPI document."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, NoReturn

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from pixgate.core import money
from pixgate.core.money import MAX_AMOUNT, MIN_AMOUNT, InvalidAmount, format_amount, to_decimal
from pixgate.core.timestamps import DATE_TIME_PATTERN, is_iso_date_time, iso

__all__ = [
    "DOCUMENT",
    "Amount",
    "ApiModel",
    "AwareTimestamp",
    "BuiltModel",
    "CentralBankAmount",
    "Money",
    "PixAmount",
    "SplitValue",
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


class Paginacao(ApiModel):
    """The `paginacao` every list of the Central Bank's API Pix answers: the page asked for
    (from 0), its size, and what there is in all; at least one page, the document's minimum,
    even when nothing matches."""

    pagina_atual: int = Field(ge=0)
    itens_por_pagina: int = Field(ge=1)
    quantidade_de_paginas: int = Field(ge=1)
    quantidade_total_de_itens: int = Field(ge=0)

    @classmethod
    def of(cls, page: int, size: int, total: int) -> Paginacao:
        return cls(
            pagina_atual=page,
            itens_por_pagina=size,
            quantidade_de_paginas=max(1, -(-total // size)),
            quantidade_total_de_itens=total,
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


AMOUNT_ERROR = "amount"
"""pydantic's error type for an amount refused where the request is parsed: a field error."""
_LOWEST, _HIGHEST = float(to_decimal(MIN_AMOUNT)), float(to_decimal(MAX_AMOUNT))
AMOUNT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "number", "minimum": _LOWEST, "maximum": _HIGHEST, "multipleOf": 0.01},
        {"type": "string", "pattern": money.AMOUNT.pattern},
    ],
    "description": "BRL, from 0.01 to 9999999999.99 with at most 2 decimal places (never "
    "rounded: more is refused); a JSON number, or the same written with the digits 0-9 as a "
    "string.",
}


def _checked(rule: Callable[[object], Any], error_type: str) -> PlainValidator:
    """The validator of an amount field: `rule` (a `core.money` check) runs on the value as
    parsed, and its InvalidAmount is a failure of type `error_type` giving the rule's reason."""

    def validate(value: object) -> Any:
        try:
            return rule(value)
        except InvalidAmount as exc:
            raise PydanticCustomError(error_type, "{reason}", {"reason": str(exc)}) from exc

    return PlainValidator(validate)


def _decimal_amount(value: object) -> Decimal:
    return to_decimal(money.amount_cents(value))


Amount = Annotated[Decimal, _checked(_decimal_amount, AMOUNT_ERROR), WithJsonSchema(AMOUNT_SCHEMA)]
"""A BRL amount: the one range and spelling of `core.money`, checked where the request is
parsed; a bad one is a field error (`value: must be from 0.01 to 9999999999.99`)."""
PixAmount = Annotated[
    Decimal, _checked(_decimal_amount, InvalidAmount.code), WithJsonSchema(AMOUNT_SCHEMA)
]
"""The same amount on the routes whose spec answers a bad one with PIX_INVALID_AMOUNT (the
cash-outs): `pixgate.core.http.errors` answers that code when it is a request's only problem."""


def _central_bank_amount(value: object) -> str:
    return format_amount(money.amount_cents(value, money.CENTRAL_BANK_AMOUNT))


CentralBankAmount = Annotated[
    str,
    _checked(_central_bank_amount, AMOUNT_ERROR),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": money.CENTRAL_BANK_AMOUNT.pattern,
            "description": "BRL, from 0.01 to 9999999999.99, always 2 decimal places",
        }
    ),
]
"""An amount of the Central-Bank-style routes: a string with exactly 2 decimals."""
SplitValue = Annotated[
    Decimal,
    _checked(money.split_value, AMOUNT_ERROR),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": _LOWEST, "maximum": _HIGHEST, "multipleOf": 0.0001},
                {"type": "string", "pattern": money.SPLIT_VALUE.pattern},
            ],
            "description": "from 0.01 to 9999999999.99; FIXED: BRL with at most 2 decimals; "
            "PERCENTAGE: percent of the gross amount (10 means 10%), at most 4 decimals",
        }
    ),
]
"""A split's value, in the amounts' range; its places are checked with the other splits."""


def _not_in_json_mode(value: Decimal) -> NoReturn:
    raise TypeError(
        "an answer with amounts is rendered by pixgate.core.http.responses.exact: pydantic's JSON "
        "mode would write them as strings"
    )


Money = Annotated[
    Decimal,
    PlainSerializer(_not_in_json_mode, return_type=Any, when_used="json"),
    WithJsonSchema({"type": "number", "description": "BRL, 2 decimals"}),
]
"""An amount in an answer (`core.money.to_decimal` of the cents): written as the exact JSON
number it is by `responses.exact`, with two decimals (`1234.50`), whatever its size."""

_SEP = "[./ -]*"
DOCUMENT_PATTERN = (
    rf"^(?:{_SEP}[0-9]){{11}}{_SEP}$"
    rf"|^(?:{_SEP}[0-9A-Za-z]){{12}}(?:{_SEP}[0-9]){{2}}{_SEP}$"
)
"""CPF (11 digits) or CNPJ (12 of `[0-9A-Z]` then 2 digits: the alphanumeric CNPJ), in any
case, with the punctuation `core.pix.documents.only_document_chars` drops (`.`, `-`, `/`,
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
