"""`pixgate accounts ...`: create, list, show and update accounts; their keys are `keys`."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from pixgate.cli.common import console, emit_json, money, run, shown
from pixgate.cli.keys import keys_app

if TYPE_CHECKING:
    from pixgate.accounts.queries.accounts import Account
    from pixgate.runtime import Runtime

accounts_app = typer.Typer(no_args_is_help=True, help="Accounts, balances, limits and fees.")
accounts_app.add_typer(keys_app, name="keys")


def _decimal(value: str | None, name: str) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation as exc:
        raise typer.BadParameter(f"{name} must be a decimal number") from exc


@accounts_app.command("create")
def accounts_create(
    name: Annotated[str, typer.Option(help="account holder's name")],
    document: Annotated[str | None, typer.Option(help="CPF or CNPJ")] = None,
    balance: Annotated[str, typer.Option(help="seed balance (sandbox only)")] = "0.00",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Create an account with a credential and a client certificate (secrets shown once)."""
    from pixgate.accounts.service import accounts

    created = run(lambda rt: accounts.create(rt, name=name, document=document, balance=balance))
    if as_json:
        emit_json(
            {
                "accountId": created.account_id,
                "clientId": created.client_id,
                "clientSecret": created.client_secret,
                "certificatePem": created.certificate_pem,
                "privateKeyPem": created.private_key_pem,
                "certificateFingerprint": created.certificate_fingerprint,
                "pixKey": created.pix_key,
            }
        )
        return
    console.print(f"account {created.account_id}", style="bold")
    console.print(f"clientId      {created.client_id}")
    console.print(f"clientSecret  {created.client_secret}  (shown once)")
    console.print(f"fingerprint   {created.certificate_fingerprint}")
    console.print(f"pixKey        {created.pix_key}")
    console.print(created.certificate_pem)
    console.print(created.private_key_pem)


@accounts_app.command("list")
def accounts_list(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List accounts with their balances."""
    from pixgate.accounts.service import accounts

    rows = run(accounts.list_all)
    if as_json:
        emit_json([_account_json(r) for r in rows])
        return
    table = Table("id", "name", "document", "available", "blocked")
    for r in rows:
        table.add_row(
            str(r.id),
            r.name,
            shown(r.document),
            money(r.available),
            money(r.blocked),
        )
    console.print(table)


@accounts_app.command("show")
def accounts_show(
    account_id: Annotated[int, typer.Argument(metavar="ID")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show one account: balances, limits, fees, split frequency."""
    from pixgate.accounts.service import accounts

    row = run(lambda rt: accounts.get(rt, account_id))
    data = _account_json(row)
    if as_json:
        emit_json(data)
        return
    table = Table("field", "value")
    for key, value in data.items():
        table.add_row(key, shown(value))
    console.print(table)


@accounts_app.command("update")
def accounts_update(
    account_id: Annotated[int, typer.Argument(metavar="ID")],
    transaction_limit: Annotated[str | None, typer.Option(help="per-transaction, BRL")] = None,
    daily_limit: Annotated[str | None, typer.Option(help="daily limit, BRL")] = None,
    night_limit: Annotated[str | None, typer.Option(help="20:00-06:00 limit, BRL")] = None,
    fee: Annotated[
        list[str] | None,
        typer.Option(help="OPERATION=FIXED[+PERCENT%], e.g. cash_out=0.50+1%; repeatable"),
    ] = None,
    split_frequency: Annotated[str | None, typer.Option(help="immediate, hourly or daily")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Change limits, fees and split frequency."""
    from pixgate.accounts.service import accounts
    from pixgate.core.labels import SplitFrequency
    from pixgate.core.money import to_cents

    changes: dict[str, Any] = {}
    for column, value in (
        ("transaction_limit", transaction_limit),
        ("daily_limit", daily_limit),
        ("night_limit", night_limit),
    ):
        amount = _decimal(value, column)
        if amount is not None:
            changes[column] = to_cents(amount)
    if split_frequency is not None:
        if split_frequency not in tuple(SplitFrequency):
            raise typer.BadParameter("split frequency is immediate, hourly or daily")
        changes["split_frequency"] = SplitFrequency(split_frequency)

    async def apply(rt: Runtime) -> Any:
        if fee:
            current = dict((await accounts.get(rt, account_id)).fees)
            current.update(_parse_fees(fee))
            changes["fees"] = current
        return await accounts.update(rt, account_id, changes)

    row = run(apply)
    if as_json:
        emit_json(_account_json(row))
    else:
        console.print(f"account {account_id} updated")


def _parse_fees(items: list[str]) -> dict[str, dict[str, str]]:
    fees: dict[str, dict[str, str]] = {}
    for item in items:
        operation, _, spec = item.partition("=")
        fixed, _, percent = spec.partition("+")
        fixed_value = _decimal(fixed or "0", "fee")
        percent_value = _decimal(percent.rstrip("%") or "0", "fee percent")
        if not operation or fixed_value is None or percent_value is None:
            raise typer.BadParameter("fee is OPERATION=FIXED[+PERCENT%]")
        fees[operation] = {"fixed": f"{fixed_value:.2f}", "percent": str(percent_value)}
    return fees


def _account_json(row: Account) -> dict[str, Any]:
    return {
        "accountId": row.id,
        "name": row.name,
        "document": row.document,
        "available": money(row.available),
        "blocked": money(row.blocked),
        "transactionLimit": money(row.transaction_limit),
        "dailyLimit": money(row.daily_limit),
        "nightLimit": money(row.night_limit),
        "fees": row.fees,
        "splitFrequency": row.split_frequency,
    }
