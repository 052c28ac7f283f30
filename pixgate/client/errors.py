"""One exception class per error code the gateway answers, all `PixgateError`s.

The classes are made from the server's own table (`pixgate.core.errors`, one class per code,
and the generic code of each status that a body without a code stands for), under the
server's class names: `errors.InsufficientBalance` is `PIX_INSUFFICIENT_BALANCE`,
`errors.NotFound` is `NOT_FOUND`. A code the server learns later reaches `PixgateError`
itself, with its code, until this package is updated.

    try:
        client.cash_out(order)
    except errors.InsufficientBalance as exc:
        print(exc.status, exc.code, exc.message, exc.error_id)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pixgate.client import exact
from pixgate.core import errors as server
from pixgate.core.http.errors import CODES_BY_STATUS


class PixgateError(Exception):
    """An error answer of the gateway: its HTTP `status`, its machine-readable `code` (branch
    on it), its `message`, the `error_id` to quote to support (the `X-Request-Id`), and the
    `details` some codes carry (a duplicate's `existingTransactionId`, a 429's `retryAfter`)."""

    code: str = "INTERNAL_ERROR"

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        error_id: str | None = None,
        user_message: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.error_id = error_id
        self.user_message = user_message
        self.details: Mapping[str, Any] = details or {}


def _class_name(code: str) -> str:
    """`METHOD_NOT_ALLOWED` → `MethodNotAllowed`, for a status's code with no server class."""
    return "".join(word.capitalize() for word in code.split("_"))


def _classes() -> dict[str, type[PixgateError]]:
    """Code → class: every code of the server's error classes (the first class of a code
    names it: `DuplicateExternalId` before the `ExternalIdConflict` that answers it with a
    409), then each status's generic code."""
    names: dict[str, str] = {}
    for name, value in vars(server).items():
        if (
            isinstance(value, type)
            and issubclass(value, server.PixgateError)
            and value not in (server.PixgateError, server.FamilyAnswer)
        ):
            names.setdefault(value.code, name)
    for code in CODES_BY_STATUS.values():
        names.setdefault(code, _class_name(code))
    return {
        code: type(name, (PixgateError,), {"code": code, "__module__": __name__})
        for code, name in names.items()
    }


BY_CODE: Mapping[str, type[PixgateError]] = _classes()
"""Every code the gateway answers, and its class."""
BY_NAME: Mapping[str, type[PixgateError]] = {cls.__name__: cls for cls in BY_CODE.values()}
globals().update(BY_NAME)


def __getattr__(name: str) -> type[PixgateError]:
    """For type checkers: the classes above are made at import, from the server's table."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def from_answer(status: int, headers: Mapping[str, str], content: bytes) -> PixgateError:
    """The exception an error answer stands for. Each route family's body is read: the
    envelopes' `code`, or for the Central-Bank-style simple body (no code) and a front's own
    answer, the generic code of its status, as the gateway gives one."""
    body = _json_object(content)
    code = body.get("code") or CODES_BY_STATUS.get(
        status, "HTTP_ERROR" if status < 500 else "INTERNAL_ERROR"
    )
    message = body.get("message", "")
    if isinstance(message, list):
        message = "; ".join(str(line) for line in message)
    details = body.get("details")
    cls = BY_CODE.get(str(code), PixgateError)
    return cls(
        status=status,
        code=str(code),
        message=str(message) or body.get("error", "") or str(status),
        error_id=body.get("errorId") or headers.get("x-request-id"),
        user_message=body.get("userMessage"),
        details=details if isinstance(details, dict) else None,
    )


def _json_object(content: bytes) -> dict[str, Any]:
    """The answer's JSON object, or nothing when a front answered something else."""
    try:
        body = exact.loads(content)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
