"""One exception class per error code the gateway answers, made from the server's table;
how each route family's error body is read."""

from __future__ import annotations

import inspect

import pytest

from pixgate.client import errors
from pixgate.core import errors as server
from pixgate.core.http.errors import CODES_BY_STATUS


def server_codes() -> dict[str, str]:
    """Every code the gateway answers, and the name of the first class that answers it."""
    codes: dict[str, str] = {}
    for name, cls in inspect.getmembers(server, inspect.isclass):
        if issubclass(cls, server.PixgateError) and cls not in (
            server.PixgateError,
            server.FamilyAnswer,
        ):
            codes.setdefault(cls.code, name)
    return codes | {code: "" for code in CODES_BY_STATUS.values() if code not in codes}


@pytest.mark.parametrize("code", sorted(server_codes()))
def test_every_code_the_server_answers_has_its_class(code: str) -> None:
    cls = errors.BY_CODE[code]
    assert issubclass(cls, errors.PixgateError) and cls.code == code
    assert getattr(errors, cls.__name__) is cls


def test_classes_carry_the_servers_names() -> None:
    assert errors.InsufficientBalance.code == "PIX_INSUFFICIENT_BALANCE"
    assert errors.DuplicateExternalId.code == "PIX_DUPLICATE_EXTERNAL_ID"
    assert errors.DatabaseUnavailable.code == "SERVICE_UNAVAILABLE"
    assert errors.MethodNotAllowed.code == "METHOD_NOT_ALLOWED"
    with pytest.raises(AttributeError):
        errors.NoSuchError


def test_each_familys_body_is_read() -> None:
    envelope = errors.from_answer(
        400,
        {},
        b'{"statusCode": 400, "code": "HTTP_ERROR", "message": ["value: too big", "x: y"],'
        b' "userMessage": "Some fields are invalid.", "errorId": "e-1", "error": "Bad Request"}',
    )
    assert isinstance(envelope, errors.ValidationFailed)
    assert (envelope.message, envelope.user_message, envelope.error_id) == (
        "value: too big; x: y",
        "Some fields are invalid.",
        "e-1",
    )
    simple = errors.from_answer(
        404,
        {"x-request-id": "r-2"},
        b'{"statusCode": 404, "message": "cob not found", "error": "Not Found"}',
    )
    assert (type(simple), simple.code, simple.error_id) == (errors.NotFound, "NOT_FOUND", "r-2")
    unknown = errors.from_answer(400, {}, b'{"code": "A_NEWER_CODE", "message": "m"}')
    assert (type(unknown), unknown.code) == (errors.PixgateError, "A_NEWER_CODE")
    not_json = errors.from_answer(502, {}, b"<html>Bad Gateway</html>")
    assert (type(not_json), not_json.status, not_json.message) == (errors.InternalError, 502, "502")
    uri_too_long = errors.from_answer(414, {}, b"")
    assert (type(uri_too_long), uri_too_long.code) == (errors.ValidationFailed, "HTTP_ERROR")
