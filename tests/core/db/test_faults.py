"""A driver fault becomes pixgate's error once, in the pool: every statement on a pool
connection raises `core.db.faults`' errors, whatever the feature that sent it."""

from __future__ import annotations

import ast
from pathlib import Path

import asyncpg
import pytest

from pixgate.core.db.faults import Duplicate, Refused
from pixgate.core.errors import TotalOutOfRange, TryAgain
from pixgate.runtime import Runtime

PACKAGE = Path(__file__).resolve().parents[3] / "pixgate"


def _raise(state: str, detail: str = "") -> str:
    return (
        "DO $$ BEGIN RAISE EXCEPTION 'refused here' "
        f"USING ERRCODE = '{state}', DETAIL = '{detail}'; END $$"
    )


async def test_a_database_function_s_refusal_is_refused_with_its_state_and_detail(
    rt: Runtime,
) -> None:
    async with rt.db.connection() as conn:
        with pytest.raises(Refused) as caught:
            await conn.execute(_raise("PXZ99", "42"))
    assert (caught.value.sqlstate, caught.value.detail) == ("PXZ99", "42")
    assert caught.value.as_error({"PXZ99": lambda r: ValueError(r.detail)}).args == ("42",)
    assert caught.value.as_error({}) is caught.value  # a state nobody expects stays a bug


@pytest.mark.parametrize(
    ("state", "error"), [("40P01", TryAgain), ("40001", TryAgain), ("22003", TotalOutOfRange)]
)
async def test_lost_races_and_sums_out_of_range_are_ours(
    rt: Runtime, state: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        async with rt.db.begin() as conn:
            await conn.fetchval(_raise(state))


async def test_a_unique_violation_names_its_constraint(rt: Runtime) -> None:
    with pytest.raises(Duplicate) as caught:
        async with rt.db.begin() as conn:
            await conn.execute(
                "INSERT INTO sql_files (name, checksum) SELECT name, checksum FROM sql_files "
                "LIMIT 1"
            )
    assert caught.value.constraint == "sql_files_pkey"


async def test_any_other_server_error_is_left_as_the_bug_it_is(rt: Runtime) -> None:
    async with rt.db.connection() as conn:
        with pytest.raises(asyncpg.PostgresSyntaxError):
            await conn.execute("SELEC 1")


def _driver_errors(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "asyncpg"
            and (node.attr.endswith("Error") or node.attr == "exceptions")
        ):
            found.append(f"line {node.lineno}: asyncpg.{node.attr}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("asyncpg"):
            found.append(f"line {node.lineno}: from {node.module}")
    return found


OUTSIDE_THE_POOL = [
    p
    for p in sorted(PACKAGE.rglob("*.py"))
    if "migrations" not in p.parts and p.parent != PACKAGE / "core" / "db"
]


@pytest.mark.parametrize("path", OUTSIDE_THE_POOL, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_outside_the_pool_names_a_driver_error(path: Path) -> None:
    assert _driver_errors(path) == []


def test_the_driver_error_check_sees_one(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import asyncpg\ntry:\n    pass\nexcept asyncpg.UniqueViolationError:\n    pass\n"
    )
    assert _driver_errors(module) == ["line 4: asyncpg.UniqueViolationError"]
