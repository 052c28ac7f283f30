"""The layers of docs/architecture.md, enforced: a module imports only its own layer and the
ones below it, and the domain does no I/O. Every import counts, including those inside
functions and under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pixgate"

# Lowest first. Modules at the package's top level sit with the layer they serve.
LAYERS: list[set[str]] = [
    {"domain", "settings", "clock", "timestamps", "logging", "gc_tuning", "webhooks"},
    {"db"},
    {"ledger"},
    {"provider"},
    {"runtime"},
    {"services"},
    {"jobs"},
    {"api"},
    {"cli"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
NO_IO = ("asyncpg", "httpx", "httpcore", "fastapi", "starlette", "redis", "uvicorn")


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "migrations" not in p.parts]


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(p) for p in _modules()} - {"__init__"}
    assert parts <= set(RANK), f"give these a layer: {sorted(parts - set(RANK))}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_only(path: Path) -> None:
    part = _part(path)
    if part == "__init__":
        return
    upward = []
    for line, module in _imports(path):
        names = module.split(".")
        if names[0] != "pixgate" or len(names) < 2:
            continue
        target = names[1]
        if RANK[target] > RANK[part]:
            upward.append(f"line {line}: {module} ({target} is above {part})")
    assert upward == []


@pytest.mark.parametrize(
    "path", [p for p in _modules() if _part(p) == "domain"], ids=lambda p: p.name
)
def test_the_domain_does_no_io(path: Path) -> None:
    io = [f"line {line}: {m}" for line, m in _imports(path) if m.split(".")[0] in NO_IO]
    assert io == []


ABOVE_DB = [p for p in _modules() if _part(p) in RANK and RANK[_part(p)] > RANK["db"]]


@pytest.mark.parametrize("path", ABOVE_DB, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_rows_reach_the_layers_above_db_typed(path: Path) -> None:
    """`pixgate/db/` converts each record once, into the frozen dataclass its module
    declares (`ledger.queries.transactions.Transaction`, `charges.queries.charges.Charge`, ...): no layer above it
    imports asyncpg or names its Record. No exception is needed: the pool, its
    connections and asyncpg's errors stay behind `db/` (`core.db.pool.Connection` is the one
    type that names the driver, and `charges.queries.charges.DuplicateCharge` stands for its
    UniqueViolationError)."""
    drivers = [(line, m) for line, m in _imports(path) if m.split(".")[0] == "asyncpg"]
    assert not drivers, f"{path.name} imports asyncpg: {drivers}"
    assert "asyncpg.Record" not in path.read_text(), f"{path.name} names asyncpg.Record"


QUERY_METHODS = frozenset(
    {
        "fetch",
        "fetchrow",
        "fetchval",
        "execute",
        "executemany",
        "cursor",
        "prepare",
        "copy_from_query",
        "copy_from_table",
        "copy_to_table",
        "copy_records_to_table",
    }
)
SQL_ALLOWED: dict[str, str] = {
    "core/http/ops.py": (
        "GET /readyz's `SELECT 1` is the readiness probe itself: it asks whether a pool "
        "connection answers at all, and reads no data"
    ),
}
"""Modules above `db/` that may send a statement themselves, each with its reason."""
NO_SQL = [p for p in _modules() if _part(p) in {"services", "jobs", "api", "cli"}]


def _query_calls(path: Path) -> list[str]:
    return [
        f"line {node.lineno}: {ast.unparse(node.func)}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in QUERY_METHODS
    ]


@pytest.mark.parametrize("path", NO_SQL, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_sql_is_sent_from_db_only(path: Path) -> None:
    """Services, jobs, routes and commands call `db/`'s named functions; none of them calls
    a connection's `fetch`/`fetchrow`/`fetchval`/`execute` (or any other statement method)."""
    name = str(path.relative_to(PACKAGE))
    calls = _query_calls(path)
    if name in SQL_ALLOWED:
        assert calls, f"{name} sends no statement any more: remove it from SQL_ALLOWED"
        return
    assert calls == [], f"{name} sends SQL itself; move it into a db/ function"


def test_the_sql_check_sees_a_query(tmp_path: Path) -> None:
    """The AST check finds a call however the connection is named, nested or not."""
    module = tmp_path / "m.py"
    module.write_text(
        "async def f(c, rt):\n"
        "    await c.fetchval('SELECT 1')\n"
        "    async with rt.db.connection() as other:\n"
        "        await other.execute('DELETE FROM jobs')\n"
    )
    assert _query_calls(module) == ["line 2: c.fetchval", "line 4: other.execute"]
