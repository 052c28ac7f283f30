"""The house of docs/architecture.md, enforced on every import (inside functions and under
TYPE_CHECKING too): features reach each other only through their public modules, layers
inside a feature import one way, the shared core imports no feature, rules do no I/O, only
queries send SQL, and no folder holds more than 15 modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pixgate"

FEATURES = frozenset(
    {
        "accounts",
        "charges",
        "payouts",
        "refunds",
        "med",
        "webhooks",
        "ledger",
        "jobs",
        "sandbox",
        "dashboard",
    }
)
SHARED = frozenset({"core", "provider"})
"""The shared core every feature may import; it imports no feature."""
ROOTS = frozenset({"app", "routers", "runtime", "ops", "openapi", "gc_tuning", "cli"})
"""The composition root: builds the app, the runtime and the commands out of the features."""
CLIENT = frozenset({"client"})
"""The integrators' client: it reads the server's wire models and error codes, and nothing
that runs the gateway."""
ROOT_MODULES: dict[str, str] = {
    "jobs/registry.py": "the handler table names every feature's job handlers",
    "jobs/worker.py": "runs the handler table",
    "provider/choice.py": "PIXGATE_PROVIDER picks the bank, the sandbox's among them",
}
"""Modules inside a feature or the core that compose features, each with its reason."""

LAYERS = ["rules", "queries", "service", "jobs", "schemas", "views", "routes", "cli", "public"]
"""Inside a feature, lowest first; a layer is a module (`refunds/service.py`) or a folder of
them (`payouts/service/cash_out.py`). `public` is the feature's face to the others."""
RANK = {layer: rank for rank, layer in enumerate(LAYERS)}
OTHER_NAMES = {
    "receiver": "rules",
    "retry": "rules",
    "queue": "queries",
    "bank": "service",
    "metrics": "service",
}
"""Feature modules named for what they hold rather than their layer."""

PURE_CORE = frozenset(
    {
        "clock",
        "counterparts",
        "errors",
        "ids",
        "labels",
        "masking",
        "money",
        "names",
        "timestamps",
    }
)
NO_IO = ("asyncpg", "httpx", "httpcore", "fastapi", "starlette", "redis", "uvicorn")
MAX_MODULES = 15


def _modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "migrations" not in p.parts]


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def _part(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _layer(path: Path) -> str | None:
    """The layer of a feature module: the first folder or module name under the feature that
    names one; None for the feature's package docstring."""
    names = [Path(part).stem for part in path.relative_to(PACKAGE).parts[1:]]
    for name in names:
        if name in RANK:
            return name
        if name in OTHER_NAMES:
            return OTHER_NAMES[name]
    return None


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every `pixgate`/third-party module the file imports, a submodule named in a `from`
    import counted as itself (`from pixgate.x import y` imports `pixgate.x.y` if it is one)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = sub.startswith("pixgate.") and _exists(sub)
                found.append((node.lineno, sub if is_module else node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def _exists(dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (
        PACKAGE / relative / "__init__.py"
    ).exists()


FEATURE_MODULES = [p for p in _modules() if _part(p) in FEATURES and _rel(p) not in ROOT_MODULES]


def test_every_part_of_the_package_is_a_feature_the_core_or_the_root() -> None:
    parts = {_part(p) for p in _modules()} - {"__init__"}
    unknown = parts - FEATURES - SHARED - ROOTS - CLIENT
    assert not unknown, f"say what these are: {sorted(unknown)}"


@pytest.mark.parametrize("path", FEATURE_MODULES, ids=_rel)
def test_every_feature_module_has_a_layer(path: Path) -> None:
    if path.name == "__init__.py":
        return
    assert _layer(path) is not None, f"{_rel(path)}: put it in one of {LAYERS}"


def _wrong_imports(path: Path, imports: list[tuple[int, str]]) -> list[str]:
    own, layer = _part(path), _layer(path)
    wrong = []
    for line, module in imports:
        names = module.split(".")
        if names[0] != "pixgate" or len(names) < 2:
            continue
        target = names[1]
        if target in ROOTS and target != "runtime":
            wrong.append(f"line {line}: {module} (the composition root is above every feature)")
        elif target in FEATURES and target != own:
            if names[2:] != ["public"]:
                wrong.append(f"line {line}: {module} (import pixgate.{target}.public)")
        elif target == own and layer is not None:
            theirs = _layer(PACKAGE.joinpath(*names[1:]))
            if theirs is not None and RANK[theirs] > RANK[layer]:
                wrong.append(f"line {line}: {module} ({theirs} is above {layer})")
    return wrong


@pytest.mark.parametrize("path", FEATURE_MODULES, ids=_rel)
def test_features_meet_through_public_modules_and_layers_go_one_way(path: Path) -> None:
    assert _wrong_imports(path, _imports(path)) == []


CLIENT_FACES = frozenset({"schemas", "public"})
"""What the client may import of a feature: its wire models, its public module, and the
package itself (`pixgate.webhooks` is the receiver's `verify_signature`)."""


def _client_wrong_imports(imports: list[tuple[int, str]]) -> list[str]:
    wrong = []
    for line, module in imports:
        names = module.split(".")
        if names[0] != "pixgate" or len(names) < 2:
            continue
        target, faces = names[1], set(names[2:])
        if target in ROOTS:
            wrong.append(f"line {line}: {module} (the client runs no part of the gateway)")
        elif target in FEATURES and names[2:] and not faces & CLIENT_FACES:
            wrong.append(f"line {line}: {module} (the client reads schemas and public modules)")
    return wrong


@pytest.mark.parametrize("path", [p for p in _modules() if _part(p) in CLIENT], ids=_rel)
def test_the_client_reads_wire_models_only(path: Path) -> None:
    assert _client_wrong_imports(_imports(path)) == []


def test_the_client_check_sees_a_service_and_the_root() -> None:
    assert _client_wrong_imports(
        [
            (1, "pixgate.payouts.service.outgoing"),
            (2, "pixgate.runtime"),
            (3, "pixgate.payouts.schemas.cash_out"),
            (4, "pixgate.webhooks.by_key.schemas"),
            (5, "pixgate.webhooks"),
            (6, "pixgate.core.errors"),
        ]
    ) == [
        "line 1: pixgate.payouts.service.outgoing (the client reads schemas and public modules)",
        "line 2: pixgate.runtime (the client runs no part of the gateway)",
    ]


def test_the_import_check_sees_a_back_door_and_an_upward_import() -> None:
    service = PACKAGE / "refunds" / "service.py"
    assert _wrong_imports(
        service,
        [
            (1, "pixgate.payouts.service.outgoing"),
            (2, "pixgate.refunds.routes.devolucao"),
            (3, "pixgate.app"),
            (4, "pixgate.payouts.public"),
            (5, "pixgate.refunds.queries"),
        ],
    ) == [
        "line 1: pixgate.payouts.service.outgoing (import pixgate.payouts.public)",
        "line 2: pixgate.refunds.routes.devolucao (routes is above service)",
        "line 3: pixgate.app (the composition root is above every feature)",
    ]


@pytest.mark.parametrize(
    "path", [p for p in _modules() if _part(p) in SHARED and _rel(p) not in ROOT_MODULES], ids=_rel
)
def test_the_shared_core_imports_no_feature(path: Path) -> None:
    features = [
        f"line {line}: {m}"
        for line, m in _imports(path)
        if m.split(".")[0] == "pixgate"
        and len(m.split(".")) > 1
        and m.split(".")[1] in FEATURES | ROOTS - {"runtime"}
    ]
    assert features == []


PURE = [
    p
    for p in _modules()
    if (_part(p) in FEATURES and _layer(p) == "rules")
    or (_part(p) == "core" and p.parent == PACKAGE / "core" and p.stem in PURE_CORE)
    or p.parent == PACKAGE / "core" / "pix"
]


@pytest.mark.parametrize("path", PURE, ids=_rel)
def test_rules_do_no_io(path: Path) -> None:
    io = [f"line {line}: {m}" for line, m in _imports(path) if m.split(".")[0] in NO_IO]
    assert io == []


def test_the_pure_rules_are_found() -> None:
    """The checks above see the rules of every feature that has them, and the core's."""
    found = {_rel(p) for p in PURE}
    assert {"core/money.py", "refunds/rules.py", "webhooks/rules/payloads.py"} <= found


ABOVE_QUERIES = [
    p
    for p in FEATURE_MODULES
    if _layer(p) is not None and RANK[_layer(p) or "public"] > RANK["queries"]
] + [p for p in _modules() if _part(p) in ROOTS]


@pytest.mark.parametrize("path", ABOVE_QUERIES, ids=_rel)
def test_rows_reach_the_layers_above_queries_typed(path: Path) -> None:
    """Queries convert each record once, into the frozen dataclass their module declares
    (`ledger.queries.transactions.Transaction`, `charges.queries.charges.Charge`, ...): no
    layer above them imports asyncpg or names its Record. The pool, its connections and
    asyncpg's errors stay behind the queries and `core/db/` (`core.db.pool.Connection` is the
    one type that names the driver, `charges.queries.charges.DuplicateCharge` stands for its
    UniqueViolationError)."""
    drivers = [(line, m) for line, m in _imports(path) if m.split(".")[0] == "asyncpg"]
    assert not drivers, f"{path.name} imports asyncpg: {drivers}"
    assert "asyncpg.Record" not in path.read_text(), f"{path.name} names asyncpg.Record"


def _folders() -> list[Path]:
    return sorted({p.parent for p in PACKAGE.rglob("*.py")})


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_folder_holds_more_than_15_modules(folder: Path) -> None:
    """Alembic's history too: its versions/ holds folders of ten revisions."""
    modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert len(modules) <= MAX_MODULES, f"{len(modules)} modules: split the folder"


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
    "ops.py": (
        "GET /readyz's `SELECT 1` is the readiness probe itself: it asks whether a pool "
        "connection answers at all, and reads no data"
    ),
}
"""Modules above the queries that may send a statement themselves, each with its reason."""
NO_SQL = [p for p in ABOVE_QUERIES if _rel(p) not in ROOT_MODULES or _rel(p) == "jobs/registry.py"]
"""Services, job handlers, schemas, views, routes, commands and the composition root."""


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
    """Services, jobs, routes and commands call the queries' named functions; none of them
    calls a connection's `fetch`/`fetchrow`/`fetchval`/`execute` (or any other statement
    method)."""
    name = str(path.relative_to(PACKAGE))
    calls = _query_calls(path)
    if name in SQL_ALLOWED:
        assert calls, f"{name} sends no statement any more: remove it from SQL_ALLOWED"
        return
    assert calls == [], f"{name} sends SQL itself; move it into a queries function"


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


def _family_answers() -> set[str]:
    from pixgate.core import errors

    return {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, errors.FamilyAnswer)
        and value is not errors.FamilyAnswer
    }


BELOW_ROUTES = [
    p for p in FEATURE_MODULES if _layer(p) in {"rules", "queries", "service", "jobs", "schemas"}
]


@pytest.mark.parametrize("path", BELOW_ROUTES, ids=_rel)
def test_the_route_family_picks_the_code_not_the_service(path: Path) -> None:
    """A service raises the domain error (`InsufficientBalance`); a route whose family answers
    it with a code of its own says so (`core.http.errors.answering`)."""
    names = {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Name | ast.Attribute)
    } | {
        alias.name
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert names & _family_answers() == set()


def test_the_family_answers_are_found() -> None:
    assert {"DictTransferInsufficientBalance", "ExternalIdConflict"} <= _family_answers()
