"""`pixgate accounts keys ...`: the PIX keys our accounts receive on (`accounts.service.keys`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from pixgate.cli.common import console, emit_json, run
from pixgate.core.timestamps import iso

if TYPE_CHECKING:
    from pixgate.accounts.queries.keys import AccountKey

keys_app = typer.Typer(no_args_is_help=True, help="PIX keys that pay into an account.")


@keys_app.command("add")
def add(
    account: Annotated[int, typer.Option(help="account id")],
    key: Annotated[
        str | None,
        typer.Argument(
            metavar="KEY",
            help="the account's CPF or CNPJ, a +55 phone, an e-mail or a hyphenated EVP",
        ),
    ] = None,
    random: Annotated[bool, typer.Option("--random", help="a new random key (EVP)")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Register a key to the account: KEY as written, or a new random one with --random."""
    from pixgate.accounts.service import keys

    if random == (key is not None):
        raise typer.BadParameter("give either KEY or --random")
    if key is None:
        added = run(lambda rt: keys.add_random(rt, account))
    else:
        chosen = key
        added = run(lambda rt: keys.add(rt, account, chosen))
    if as_json:
        emit_json(_key_json(added))
    else:
        console.print(f"key {added.key} ({added.key_type}) added to account {account}")


@keys_app.command("list")
def list_(
    account: Annotated[int, typer.Option(help="account id")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """List the account's keys, oldest first."""
    from pixgate.accounts.service import keys

    found = run(lambda rt: keys.list_of(rt, account))
    if as_json:
        emit_json({"accountId": account, "keys": [_key_json(k) for k in found]})
        return
    table = Table("key", "type", "created")
    for k in found:
        table.add_row(k.key, k.key_type, iso(k.created_at))
    console.print(table)


@keys_app.command("remove")
def remove(
    account: Annotated[int, typer.Option(help="account id")],
    key: Annotated[str, typer.Argument(metavar="KEY")],
) -> None:
    """Unregister one of the account's keys (any spelling of it)."""
    from pixgate.accounts.service import keys

    removed = run(lambda rt: keys.remove(rt, account, key))
    typer.echo(f"key {removed} removed from account {account}")


def _key_json(key: AccountKey) -> dict[str, object]:
    return {
        "key": key.key,
        "keyType": key.key_type,
        "accountId": key.account_id,
        "createdAt": iso(key.created_at),
    }
