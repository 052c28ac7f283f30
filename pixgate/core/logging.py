"""structlog set-up: JSON lines when not on a terminal, readable lines on one.

Secrets never reach a log line (docs/deployment.md, "Logs"). Code logs ids, never
credentials; `redact`, the processor before the renderer, is the defence in depth for a
mistake: it blanks the values of keys whose name says secret (`authorization`,
`client_secret`, `x-ssl-client-cert`, ...) and, in every string (the event, the values,
a formatted traceback), JWTs, PEM blocks (raw or percent-encoded as in
`X-SSL-Client-Cert`), `whsec_` webhook secrets, bearer and basic credentials,
`token=...`-style pairs, a URL's password and pydantic's `input_value=...`.

The standard library's records (uvicorn's "Exception in ASGI application" with its
traceback, asyncpg, httpx, Python's warnings) go through the same processors and renderer,
at WARNING and above, instead of uvicorn's plain-text handlers.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"authori[sz]ation|secret|token|passw|pwd|cookie|ssl[-_]client[-_]cert|client[-_]?cert"
    r"|private[-_]?key|api[-_]?key|credential|signature|jwt|bearer|session",
    re.IGNORECASE,
)
"""A key whose value is blanked whatever it holds (a `None` stays, to show absence)."""

_HEADERS_KEY = re.compile(r"headers?$", re.IGNORECASE)
"""Header maps keep their names only: webhook receivers put credentials under any name."""

_SECRET_TEXT = re.compile(
    # A PEM block, or its start if cut: the header, then base64 (reprs write "\n").
    r"-----BEGIN[ A-Z0-9]*-----(?:\\[rn]|\s)*[A-Za-z0-9+/=]"
    r"(?:[A-Za-z0-9+/=:,\s]|\\[rn])*(?:-----END[ A-Z0-9]*-----)?"
    # The same percent-encoded, as nginx's $ssl_client_escaped_cert sends it (its dashes
    # are encoded or not, its spaces are %20 or a form's +).
    r"|(?i:(?:%2D){5}BEGIN|(?:%2D|-){5}BEGIN(?:%20|\+))[A-Za-z0-9%._~+/=-]*"
    # A JWT or JWS (header, payload, signature; an `alg: none` one has no signature).
    r"|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"
    # A webhook signing secret (docs/webhooks.md).
    r"|whsec_[A-Za-z0-9+/=_-]{8,}"
    # HTTP credentials (well-formed or not): keep the scheme.
    r"|(?P<scheme>(?i:bearer)\s+|Basic\s+)[^\s\"',;]{6,}"
    # The password of a URL's userinfo (a webhook URL, a database DSN).
    r"|(?P<userinfo>://[^/\s:@\"']*:)[^/\s@\"']+(?=@)"
    # `name=value`, `"name": "value"`: query strings, forms, reprs, JSON in a message.
    r"|(?P<pair>(?i:\b(?:access_token|refresh_token|id_token|token|client_secret|clientsecret"
    r"|secret|password|passwd|api_key|apikey)\b)[\"']?\s*[=:]\s*[\"']?)[^\s\"'&,;}]+"
    # pydantic's ValidationError text repeats the input it refused.
    r"|(?P<input>input_value=)(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,\]\s]+)"
)

_MAX_DEPTH = 4
_MAX_ITEMS = 256
_MAX_BYTES = 64 * 1024
_TOO_BIG = "[REDACTED: too large to check]"
_SKIPPED_KEYS = frozenset({"timestamp", "level", "logger", "_record", "_from_structlog"})
"""Set by the processors themselves (or stdlib's record, which the renderer never shows)."""
_PLAIN = (bool, int, float)


def _keep_label(match: re.Match[str]) -> str:
    label = (
        match.group("scheme")
        or match.group("pair")
        or match.group("input")
        or match.group("userinfo")
        or ""
    )
    return label + REDACTED


_CLUES = (
    "-----",
    "%2d",
    "eyj",
    "whsec_",
    "bearer",
    "basic",
    "token",
    "secret",
    "passw",
    "api_key",
    "apikey",
    "input_value",
    "@",
)
"""Every match of _SECRET_TEXT holds one of these (lowercased): looking for them first is
several times cheaper than the regex on the short strings of most lines."""


def redact_text(text: str) -> str:
    """`text` with every secret-looking part replaced; the same object when there is none."""
    lowered = text.lower()
    for clue in _CLUES:  # a plain loop: any() over a generator costs twice as much
        if clue in lowered:
            return _SECRET_TEXT.sub(_keep_label, text) if _SECRET_TEXT.search(text) else text
    return text


_PLAIN_KEY, _SECRET, _HEADERS = 0, 1, 2


@functools.lru_cache(maxsize=1024)
def _kind_of_key(name: str) -> int:
    if _SECRET_KEY.search(name):
        return _SECRET
    return _HEADERS if _HEADERS_KEY.search(name) else _PLAIN_KEY


def _masked_headers(value: Any) -> Any:
    if isinstance(value, Mapping) and len(value) <= _MAX_ITEMS:
        return {name: REDACTED for name in value}
    return REDACTED


def _for_key(key: Any, value: Any, depth: int) -> Any:
    if value is None:
        return None
    kind = _kind_of_key(key) if isinstance(key, str) else _PLAIN_KEY
    if kind == _SECRET:
        return REDACTED
    if kind == _HEADERS:
        return _masked_headers(value)
    if type(value) is str:
        return redact_text(value)
    return _clean(value, depth)


def _clean(value: Any, depth: int) -> Any:
    """A cleaned copy of `value`, walking containers only a few levels and items deep."""
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, _PLAIN):
        return value
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        if depth >= _MAX_DEPTH or len(value) > _MAX_ITEMS:
            return _TOO_BIG
        if isinstance(value, Mapping):
            return {k: _for_key(k, v, depth + 1) for k, v in value.items()}
        return [_clean(item, depth + 1) for item in value]
    if isinstance(value, bytes | bytearray):
        if len(value) > _MAX_BYTES:
            return _TOO_BIG
        text = bytes(value).decode("latin-1")
        return value if redact_text(text) is text else REDACTED
    # Anything else is rendered from its text (JSON's fallback is repr): check that text.
    text = repr(value)
    cleaned = redact_text(text)
    return value if cleaned is text else cleaned


def redact(
    logger: Any, _method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: goes after `format_exc_info` (the traceback is text by then) and
    right before the renderer. A line of a few short strings and numbers costs about 2 us
    (its JSON render about 3 us); only lines that pass the level filter get here."""
    for key, value in event_dict.items():
        if key in _SKIPPED_KEYS:
            continue
        cleaned = _for_key(key, value, 0)
        if cleaned is not value:
            event_dict[key] = cleaned
    return event_dict


_HANDLER_NAME = "pixgate"


def configure(*, json: bool | None = None, level: str = "INFO") -> bool:
    """Set up the logs; whether they are JSON lines (unset: when stderr is no terminal), so
    that a caller writes nothing else where a collector reads them."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    numeric = logging.getLevelName(level.upper())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    _route_standard_logging(renderer, max(numeric, logging.WARNING))
    return as_json


def _route_standard_logging(renderer: structlog.types.Processor, level: int) -> None:
    """One root handler renders the standard library's records like ours; uvicorn's own
    handlers (configured before the app factory runs) hand their records to it."""
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_logger_name,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact,
        ],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # `warnings` too, rather than a bare line on stderr
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        named = logging.getLogger(name)
        if named.handlers:  # uvicorn.access has none when the access log is off
            named.handlers.clear()
            named.propagate = True
