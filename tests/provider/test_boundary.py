"""Only the sandbox provider acts on `X-Sandbox-Scenario`: the API parses the header into
the request's provider instructions, and every other part carries them without knowing
what they say. A service, query, SQL function or job that named a scenario again (to branch
on it, or to keep it in a transaction's `details`) fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pixgate.core.db import sql_files

PACKAGE = Path(__file__).resolve().parents[2] / "pixgate"
READERS = {"accounts/routes/deps.py", "sandbox/bank.py", "sandbox/public.py"}
"""The modules that know what a scenario is: the header's parser, the sandbox bank, and the
sandbox's public module that hands the parser over."""
CARRIERS = (
    *(
        f"{feature}/{layer}"
        for feature in ("accounts", "charges", "payouts", "webhooks")
        for layer in ("service", "queries")
    ),
    "charges/jobs",
    "payouts/jobs.py",
    "refunds/service.py",
    "refunds/queries",
    "med/service.py",
    "med/queries.py",
    "webhooks/jobs.py",
    "sandbox/service.py",
    "sandbox/queries.py",
    "jobs",
    "ledger",
    "core/db",
    "provider",
    "runtime.py",
)
"""Parts that hand the instructions on, or keep them, unread."""


def _modules(*parts: str) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        path = PACKAGE / part
        assert path.exists(), f"{part} is not in the package any more"
        found.extend([path] if path.suffix == ".py" else sorted(path.rglob("*.py")))
    return [p for p in found if "migrations" not in p.parts]


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE))


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes: prose may tell the reader about scenarios."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, owners) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _code_words(path: Path) -> list[str]:
    """The identifiers and string literals of a module, its docstrings left out."""
    tree = ast.parse(path.read_text())
    prose = _docstrings(tree)
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            words.append(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.alias):
            words.append(node.name)
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        ):
            words.append(node.value)
    return words


def test_only_the_header_s_parser_and_the_sandbox_read_the_scenarios() -> None:
    importers = {
        _name(path)
        for path in _modules(".")
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.ImportFrom) and node.module == "pixgate.sandbox.rules")
        or (
            isinstance(node, ast.ImportFrom)
            and node.module in {"pixgate.sandbox", "pixgate.sandbox.public"}
            and any(alias.name == "rules" for alias in node.names)
        )
    }
    assert importers == READERS


@pytest.mark.parametrize("path", _modules(*CARRIERS), ids=_name)
def test_no_carrier_names_a_scenario(path: Path) -> None:
    named = [word for word in _code_words(path) if "scenario" in word.lower()]
    assert named == []


@pytest.mark.parametrize("sql_file", sql_files.files(), ids=lambda f: f.name)
def test_no_sql_function_names_a_scenario(sql_file: sql_files.SqlFile) -> None:
    code = re.sub(r"--[^\n]*", "", sql_file.text)
    assert "scenario" not in code.lower()
