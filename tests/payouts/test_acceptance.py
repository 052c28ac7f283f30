"""One way to accept a payout: in the SQL function files, a payout's hold, its limits and its
settlement job are put together by `payout_accept()` alone, and a batch of cash-outs accepted
together by `payouts_create_together()` alone, through the same rules (a job row is written
by `job_enqueue()` alone: tests/jobs/test_queue.py), and the modes Python names are the ones
the function takes."""

from __future__ import annotations

import re
from pathlib import Path

from pixgate.core.db import sql_files
from pixgate.payouts.rules import AcceptMode

PACKAGE = Path(__file__).resolve().parents[2] / "pixgate"
_FUNCTION = re.compile(r"CREATE FUNCTION (\w+)\(.*?\n\$\$;", re.DOTALL)
PAYOUT_FILES = {"040_payouts.sql", "050_refunds.sql"}


def _bodies(names: set[str] | None = None) -> dict[str, str]:
    return {
        match[1]: match[0]
        for sql_file in sql_files.files()
        if names is None or sql_file.name in names
        for match in _FUNCTION.finditer(sql_file.text)
    }


def _callers(callee: str, bodies: dict[str, str]) -> set[str]:
    call = re.compile(rf"\b{callee}\(")
    return {name for name, body in bodies.items() if name != callee and call.search(body)}


def test_only_payout_accept_holds_counts_and_queues_a_payout() -> None:
    bodies = _bodies(PAYOUT_FILES)
    assert set(bodies) >= {"payout_accept", "payout_create", "refund_create"}
    for step in ("ledger_hold", "limit_check", "limit_count", "job_enqueue"):
        assert _callers(step, bodies) == {"payout_accept"}, step


def test_a_batch_of_cash_outs_is_accepted_in_one_place_by_the_same_rules() -> None:
    bodies = _bodies(PAYOUT_FILES)
    for step in ("ledger_hold_all", "limit_check_all", "job_enqueue_all"):
        assert _callers(step, bodies) == {"payouts_create_together"}, step
    assert _callers("payout_terms_changed", bodies) == {"payout_accept", "payouts_create_together"}
    every = _bodies()
    for one, batch in (
        ("ledger_hold", "ledger_hold_all"),
        ("limit_check", "limit_check_all"),
        ("job_enqueue", "job_enqueue_all"),
    ):
        assert _callers(batch, {one: every[one]}) == {one}, f"{one} is {batch} for one"


def test_every_payout_path_goes_through_payout_accept() -> None:
    bodies = _bodies()
    assert _callers("payout_accept", bodies) == {"payout_create", "refund_create"}
    python = [
        path
        for path in PACKAGE.rglob("*.py")
        if re.search(r"(SELECT|FROM) payout_accept\(", path.read_text())
        and "migrations" not in path.parts
    ]
    assert [str(p.relative_to(PACKAGE)) for p in python] == ["payouts/queries/payments.py"]


def test_the_acceptance_modes_are_the_ones_the_function_takes() -> None:
    body = _bodies(PAYOUT_FILES)["payout_accept"]
    declared = re.search(r"p_mode NOT IN \(([^)]*)\)", body)
    assert declared is not None
    assert set(re.findall(r"'(\w+)'", declared[1])) == {mode.value for mode in AcceptMode}


def test_the_function_parser_sees_every_function() -> None:
    """The checks above read function bodies: each file's functions are all found."""
    for sql_file in sql_files.files():
        created = re.findall(r"^CREATE FUNCTION (\w+)", sql_file.text, re.MULTILINE)
        assert sorted(_bodies({sql_file.name})) == sorted(created), sql_file.name
