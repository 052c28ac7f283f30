"""What a person reads when the dashboard refuses a form or an address: one line per field,
the field's label as the form shows it, then a plain reason.

Two sources: pydantic's failures (`reasons`: its own wording, "String should have at least
11 characters", is replaced by a plain reason for each kind of failure), and the services'
`field: reason` lines, shared with the API, which name the API's fields (`labelled`: the
label replaces the field's name). `render.page` labels every page's problems, so each form,
and each error page, says them the same way.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_core import ErrorDetails
from pydantic_core.core_schema import ErrorType

LABELS = {
    "value": "Amount",
    "transaction.value": "Amount",
    "description": "Description",
    "transaction.description": "Description",
    "externalId": "externalId",
    "transaction.externalId": "externalId",
    "expirationTime": "Expires after",
    "transaction.expirationTime": "Expires after",
    "fullName": "Payer's name",
    "payer.fullName": "Payer's name",
    "document": "Payer's CPF or CNPJ",
    "payer.document": "Payer's CPF or CNPJ",
    "status": "Status",
    "type": "Type",
    "event": "Event",
    "startDate": "From (date)",
    "endDate": "To (date)",
    "endToEndId": "End-to-end id",
    "page": "Page",
    "size": "Per page",
    "eventType": "Event type",
    "url": "URL",
    "version": "Payload version",
    "transaction_id": "The charge's address",
    "transaction_uuid": "The transaction's address",
    "webhook_id": "The webhook's address",
    "event_id": "The event's address",
    "delivery_id": "The delivery's address",
}
"""The dashboard's fields, by the names the forms, the services and the routes give them."""

_REASONS: dict[str, str] = {
    "missing": "is required",
    "string_too_short": "must have at least {min_length} characters",
    "string_too_long": "must have at most {max_length} characters",
    "string_type": "must be text",
    "string_pattern_mismatch": "is not written as expected",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number, such as 10.50",
    "float_type": "must be a number, such as 10.50",
    "decimal_parsing": "must be a number, such as 10.50",
    "decimal_type": "must be a number, such as 10.50",
    "finite_number": "must be a number, such as 10.50",
    "decimal_max_places": "can have at most {decimal_places} decimal places",
    "decimal_max_digits": "has too many digits",
    "decimal_whole_digits": "has too many digits",
    "greater_than": "must be more than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "bool_parsing": "must be yes or no",
    "uuid_parsing": "is not a valid identifier",
    "uuid_type": "is not a valid identifier",
    "uuid_version": "is not a valid identifier",
    "date_parsing": "must be a date, such as 2026-11-24",
    "datetime_parsing": "must be a date and time, such as 2026-11-24T10:00:00Z",
    "url_parsing": "is not a valid URL",
    "extra_forbidden": "is not a field of this form",
}
"""A plain reason for each kind of pydantic failure a form can meet; any other is "is not
valid". A failure our own validators raise (a custom type, or a `ValueError`) keeps the
reason they wrote."""
_UNKNOWN = "is not valid"
_PYDANTIC = frozenset(typing.get_args(ErrorType))
_LEAD = re.compile(r"([A-Za-z_][\w.]*)(?:: | )(.*)", re.DOTALL)


def reasons(errors: Sequence[ErrorDetails]) -> list[str]:
    """Each failure as `field: plain reason`, the field named as `labelled` reads it."""
    lines = []
    for error in errors:
        parts = [str(p) for p in error["loc"] if p not in ("body", "query", "path", "form")]
        lines.append(f"{'.'.join(parts) or 'form'}: {_reason(error)}")
    return lines


def _reason(error: ErrorDetails) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind not in _PYDANTIC:
        return error["msg"]
    if kind == "value_error":
        return str(context.get("error", _UNKNOWN))
    if kind == "string_too_short" and context.get("min_length") == 1:
        kind = "missing"
    return _REASONS.get(kind, _UNKNOWN).format_map(_Context(context))


class _Context(dict[str, Any]):
    """A template's value absent from the failure's context reads as "the limit"."""

    def __missing__(self, key: str) -> str:
        return "the limit"


def labelled(problems: Iterable[str]) -> list[str]:
    """`payer.document: not a valid CPF or CNPJ` as the form says it: `Payer's CPF or CNPJ:
    not a valid CPF or CNPJ`; a line that names no field of the dashboard is kept."""
    out = []
    for problem in problems:
        lead = _LEAD.fullmatch(problem)
        label = LABELS.get(lead[1]) if lead else None
        out.append(f"{label}: {lead[2]}" if lead and label else problem)
    return out
