"""JSON request bodies: read exactly, then screened in one bounded pass before any other use.

Numbers with a fraction or an exponent are read as `Decimal`, never through a binary float:
`1.0000000000000000000001` must reach the amount rules as written, to be refused, not
arrive as 1.0 and settle. `NaN` and `Infinity`, which Python's parser takes but JSON has not,
are malformed JSON.

The screen runs on every JSON body, before authentication, so its cost must not depend on a
body's shape, only on its size (the body is at most `PIXGATE_MAX_BODY_BYTES`): it visits each
value once and keeps only the path it is on, so its memory is bounded by the nesting depth.
It refuses what no operation takes and what would make later work grow faster than the body:
- U+0000 in a string or a key, which PostgreSQL's text and JSON types cannot hold;
- nesting deeper than `MAX_DEPTH`;
- an object with more than `MAX_MEMBERS` members: each unknown or invalid member is one
  validation error, a few hundred bytes each, so a megabyte of short keys would cost far more
  memory and time than the body itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

MAX_DEPTH = 32
"""Nesting levels a body may have; the deepest operation's body has five."""
MAX_MEMBERS = 256
"""Members an object may have; the largest object an operation takes has 50."""
NUL_REASON = "must not contain the NUL character (U+0000)"
SHOWN_KEY_CHARS = 40
"""How much of a key a message repeats: a message stays short whatever the key's length."""


def _refuse_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not a JSON value", name, 0)


def loads(raw: bytes | str) -> Any:
    """The document in `raw`, numbers with a fraction or exponent as `Decimal`.

    Raises `json.JSONDecodeError` for malformed JSON, `NaN`/`Infinity`, and nesting past the
    parser's own recursion bound (the screen's `MAX_DEPTH` answers the depths in between).
    """
    try:
        return json.loads(raw, parse_float=Decimal, parse_constant=_refuse_constant)
    except RecursionError as exc:
        raise json.JSONDecodeError("nested too deeply", "", 0) from exc


def first_problem(document: Any) -> str | None:
    """`field: reason` for the first value no operation can take, or None.

    Depth-first, holding one C iterator per nesting level and the containers of the path it
    stands on, never a key or an index: neither a deep body nor a long key held by many
    children makes it build anything, and the loop over a list's items does no more than
    look at each item's type. The path is spelled out only for the message.
    """
    if type(document) is str:
        return f"body: {NUL_REASON}" if "\x00" in document else None
    if type(document) is not dict and type(document) is not list:
        return None
    problem = _object_problem([], document)
    if problem is not None:
        return problem
    path: list[dict[str, Any] | list[Any]] = [document]
    levels: list[Iterator[Any]] = [_values(document)]
    while levels:
        for value in levels[-1]:
            kind = type(value)
            if kind is str:
                if "\x00" in value:
                    return _problem(path, value, NUL_REASON)
            elif kind is dict or kind is list:
                if len(path) >= MAX_DEPTH:
                    return _problem(path, value, f"nested deeper than {MAX_DEPTH} levels")
                if not value:
                    continue
                problem = _object_problem(path, value)
                if problem is not None:
                    return problem
                path.append(value)
                levels.append(_values(value))
                break
        else:
            levels.pop()
            path.pop()
    return None


_TOO_MANY = f"an object may have at most {MAX_MEMBERS} members"


def _object_problem(path: list[dict[str, Any] | list[Any]], value: Any) -> str | None:
    """Too many members, or a key holding U+0000 (the keys searched as one string)."""
    if type(value) is not dict:
        return None
    if len(value) > MAX_MEMBERS:
        return _problem(path, value, _TOO_MANY)
    if "\x00" in "".join(value):
        return _problem(path, value, NUL_REASON, nul_key=True)
    return None


def _values(container: dict[str, Any] | list[Any]) -> Iterator[Any]:
    return iter(container.values() if type(container) is dict else container)


def _problem(
    path: list[dict[str, Any] | list[Any]], value: Any, reason: str, *, nul_key: bool = False
) -> str:
    """`field: reason` for `value`, found below the containers of `path`.

    Each step's key is found again by identity (the first match: an earlier item that is the
    very same object would have been found first); with `nul_key`, the step into `value` is
    the key holding U+0000.
    """
    children = [*path[1:], value] if path else []  # no path: `value` is the body itself
    keys = [_key_of(parent, child) for parent, child in zip(path, children, strict=True)]
    if nul_key:
        keys.append(next(key for key in value if "\x00" in key))
    return f"{_dotted(keys)}: {reason}"


def _key_of(parent: dict[str, Any] | list[Any], child: Any) -> str:
    items = parent.items() if type(parent) is dict else enumerate(parent)
    return str(next(key for key, item in items if item is child))


def _dotted(path: list[str]) -> str:
    """The path as `a.b.0.c`, each key cut to `SHOWN_KEY_CHARS` and NUL shown as `\\u0000`."""
    if not path:
        return "body"
    return ".".join(shown_key(key) for key in path)


def shown_key(key: str) -> str:
    """A key as a message repeats it: NUL escaped, and cut short when long."""
    key = key.replace("\x00", "\\u0000")
    return key if len(key) <= SHOWN_KEY_CHARS else key[:SHOWN_KEY_CHARS] + "…"
