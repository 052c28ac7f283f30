"""`pixgate webhooks ...`: the same rules as POST/GET /api/webhooks (one service), always on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from pixgate.cli.common import console, emit_json, run
from pixgate.core.masking import mask_header_values
from pixgate.core.timestamps import iso

if TYPE_CHECKING:
    from pixgate.webhooks.service import Endpoint

webhooks_app = typer.Typer(no_args_is_help=True, help="Webhook URLs and the signing secret.")


def _header_pairs(items: list[str] | None) -> list[tuple[str, str]]:
    pairs = []
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"header {item!r} must be KEY=VALUE")
        pairs.append((key, value))
    return pairs


@webhooks_app.command("add")
def add(
    account: Annotated[int, typer.Option(help="account id")],
    event: Annotated[str, typer.Option(help="cash_in, cash_out, refund_in, refund_out, med_*")],
    url: Annotated[str, typer.Option(help="HTTPS URL of a public host")],
    version: Annotated[str, typer.Option(help="payload version: v1 or v2")] = "v1",
    header: Annotated[
        list[str] | None, typer.Option(help="custom header KEY=VALUE; repeatable, at most 5")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Add a URL for an event type (at most 3 active); an existing URL gets the new headers
    and version."""
    from pixgate.webhooks import service as webhooks

    pairs = _header_pairs(header)
    added = run(
        lambda rt: webhooks.add(
            rt, account, event_type=event, url=url, headers=pairs, version=version
        )
    )
    if as_json:
        emit_json(
            {"id": added.endpoint.id, "created": added.created, **_endpoint_json(added.endpoint)}
        )
        return
    verb = "created" if added.created else "updated"
    console.print(f"webhook {added.endpoint.id} {verb}: {event} -> {url} ({version})")
    _note_insecure(url)


def _note_insecure(url: str) -> None:
    """A URL only the insecure setting lets through is delivered only by a server that runs
    with it too: say so where it was registered."""
    from pixgate.webhooks.service import reachability

    if reachability.refusal(url, allow_insecure=False) is not None:
        typer.echo(
            "note: this URL is allowed by PIXGATE_ALLOW_INSECURE_WEBHOOKS=true; the server that "
            "delivers it needs that setting too (a .env file in its directory)",
            err=True,
        )


@webhooks_app.command("list")
def list_(
    account: Annotated[int, typer.Option(help="account id")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """List the account's webhook URLs."""
    from pixgate.webhooks import service as webhooks

    found = run(lambda rt: webhooks.list_endpoints(rt, account))
    if as_json:
        emit_json(
            {
                "accountId": account,
                "webhooks": [_endpoint_json(e) for e in found],
                "total": len(found),
            }
        )
        return
    table = Table("id", "type", "url", "version", "active", "headers")
    for e in found:
        shown = ", ".join(f"{k}: {v}" for k, v in mask_header_values(e.headers).items())
        table.add_row(str(e.id), e.event_type, e.url, e.version, str(e.is_active), shown)
    console.print(table)


@webhooks_app.command("remove")
def remove(endpoint_id: Annotated[int, typer.Argument(metavar="ID")]) -> None:
    """Remove a webhook URL; its pending deliveries are marked failed."""
    from pixgate.webhooks import service as webhooks

    run(lambda rt: webhooks.remove(rt, endpoint_id))
    typer.echo(f"webhook {endpoint_id} removed")


@webhooks_app.command("secret")
def secret(
    account: Annotated[int, typer.Option(help="account id")],
    rotate: Annotated[
        bool, typer.Option("--rotate", help="new secret; the old one signs for the overlap window")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Show the account's signing secret (once), or rotate it."""
    from pixgate.webhooks import service as webhooks

    value = run(
        lambda rt: (webhooks.rotate_secret if rotate else webhooks.reveal_secret)(rt, account)
    )
    if as_json:
        emit_json({"secret": value})
    else:
        typer.echo(value)


def _endpoint_json(endpoint: Endpoint) -> dict[str, object]:
    return {
        "id": endpoint.id,
        "type": endpoint.event_type,
        "url": endpoint.url,
        "headers": mask_header_values(endpoint.headers),
        "version": endpoint.version,
        "isActive": endpoint.is_active,
        "createdAt": iso(endpoint.created_at),
    }
