"""Strategies the hostile-input sweep (test_fuzz.py) puts in the fields where schemathesis'
own generation falls short: amounts across their whole declared range and just outside it
(it never sent one between 1e10 and 1e17), and names in any script.

The fields are found in the OpenAPI document itself: an amount is a schema that publishes
one of `core.money`'s spellings; a name is a string property called `name`, `fullName` or
`nome`. So a new operation's amounts and names are fuzzed without being listed here.
"""

from __future__ import annotations

from collections.abc import Iterator
from copy import deepcopy
from typing import Any

from hypothesis import strategies as st

from pixgate.core import money

Path = tuple[str, ...]
"""Keys from a body to one of its values; `*` stands for every item of a list."""
AMOUNT_PATTERNS = {
    money.AMOUNT.pattern,
    money.CENTRAL_BANK_AMOUNT.pattern,
    money.SPLIT_VALUE.pattern,
}
NAME_KEYS = {"name", "fullName", "nome"}

_magnitudes = st.integers(0, 20).flatmap(lambda e: st.integers(10**e, 10 ** (e + 1)))
CENTS = st.one_of(
    st.integers(money.MIN_AMOUNT, money.MAX_AMOUNT),  # anywhere in the range
    _magnitudes,  # every power of ten up to 1e20 cents: 1e10 to 1e17 BRL included
    st.sampled_from([0, money.MIN_AMOUNT, money.MAX_AMOUNT, money.MAX_AMOUNT + 1, money.MAX_CENTS]),
    st.integers(-(10**20), 0),
)
OTHER_DIGITS = st.text(st.characters(categories=["Nd"]), min_size=1, max_size=12)
"""Decimal digits of every script (`١٠`, `１０`, `१०`), which Python's Decimal reads."""
AMOUNTS = st.one_of(
    CENTS.map(money.format_amount),  # "1234.50"
    CENTS.map(lambda cents: cents / 100),  # a JSON number with its decimals
    CENTS.map(lambda cents: cents // 100),  # a JSON integer
    st.sampled_from(["1e2", "1e400", "1e308", "9" * 400, " 10", "1_000", ".5", "10.", "-0"]),
    OTHER_DIGITS,
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
)
_SCRIPTS = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # CJK
    st.characters(min_codepoint=0x0600, max_codepoint=0x06FF),  # Arabic
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),  # emoji
    st.characters(categories=["Mn", "Me"]),  # combining marks
    st.characters(categories=["L", "Zs"]),  # letters of any script, spaces
)
NAMES = st.one_of(
    st.text(_SCRIPTS, min_size=1, max_size=120),
    st.sampled_from(["東京商店", "مطعم الشام", "👩\u200d👩\u200d👧", "e\u0301\u0301", "Ωμέγα"]),
)


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for key in schema["$ref"].removeprefix("#/").split("/"):
            node = node[key]
        schema = node
    return schema


def _is_amount(schema: dict[str, Any]) -> bool:
    branches = [schema, *schema.get("anyOf", [])]
    return any(branch.get("pattern") in AMOUNT_PATTERNS for branch in branches)


def _is_text(schema: dict[str, Any]) -> bool:
    branches = [schema, *schema.get("anyOf", [])]
    return any(branch.get("type") == "string" for branch in branches)


def _fields(
    document: dict[str, Any], schema: dict[str, Any], path: Path, depth: int = 0
) -> Iterator[tuple[Path, st.SearchStrategy[Any]]]:
    schema = _resolve(document, schema)
    if _is_amount(schema):
        yield path, AMOUNTS
        return
    if depth > 8:
        return
    for branch in schema.get("anyOf", []) + schema.get("allOf", []):
        yield from _fields(document, branch, path, depth + 1)
    if "items" in schema:
        yield from _fields(document, schema["items"], (*path, "*"), depth + 1)
    for key, child in schema.get("properties", {}).items():
        if key in NAME_KEYS and _is_text(_resolve(document, child)):
            yield (*path, key), NAMES
        else:
            yield from _fields(document, child, (*path, key), depth + 1)


def body_fields(document: dict[str, Any]) -> dict[tuple[str, str], dict[Path, Any]]:
    """For each operation (method, path template), the amount and name fields of its JSON
    body and the strategy of each."""
    found: dict[tuple[str, str], dict[Path, Any]] = {}
    for template, item in document["paths"].items():
        for method, operation in item.items():
            content = operation.get("requestBody", {}).get("content", {})
            schema = content.get("application/json", {}).get("schema")
            if schema is not None:
                found[(method.upper(), template)] = dict(_fields(document, schema, ()))
    return found


def _places(body: Any, path: Path) -> Iterator[tuple[Any, Any]]:
    """The (container, key) pairs of `body` that `path` names and that hold a value."""
    if not path:
        return
    key, rest = path[0], path[1:]
    children: list[tuple[Any, Any]]
    if key == "*":
        children = list(enumerate(body)) if isinstance(body, list) else []
    else:
        children = [(key, body[key])] if isinstance(body, dict) and key in body else []
    for child_key, child in children:
        if rest:
            yield from _places(child, rest)
        else:
            yield body, child_key


def refill(body: Any, fields: dict[Path, Any]) -> st.SearchStrategy[Any]:
    """`body` with a draw of its field's strategy in each amount and name it holds."""
    paths = [(path, len(list(_places(body, path)))) for path in fields]
    strategies = [fields[path] for path, count in paths for _ in range(count)]
    if not strategies:
        return st.just(body)

    def put(values: tuple[Any, ...]) -> Any:
        copy = deepcopy(body)
        places = [place for path, _ in paths for place in _places(copy, path)]
        for (container, key), value in zip(places, values, strict=True):
            container[key] = value
        return copy

    return st.tuples(*strategies).map(put)
