"""The `pixgate` command line: serve, worker, database, accounts (and their PIX keys),
credentials, certificates, ledger.

Each command goes options -> service -> Rich table or `--json`. A `PixgateError`
prints its code and message and exits 1.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from pixgate.cli import help_format, serving
from pixgate.cli.common import (
    console,
    database_url,
    emit_json,
    exit_without_collecting,
    money,
    run,
    shown,
)
from pixgate.cli.keys import keys_app
from pixgate.cli.webhooks import webhooks_app

if TYPE_CHECKING:
    from pixgate.accounts.queries.accounts import Account
    from pixgate.runtime import Runtime

help_format.install()
exit_without_collecting()
app = typer.Typer(no_args_is_help=True, help="pixgate: a self-hostable PIX payment gateway.")
db_app = typer.Typer(no_args_is_help=True, help="Database schema.")
accounts_app = typer.Typer(no_args_is_help=True, help="Accounts, balances, limits and fees.")
credentials_app = typer.Typer(no_args_is_help=True, help="Client credentials.")
certs_app = typer.Typer(no_args_is_help=True, help="Client certificates.")
ledger_app = typer.Typer(no_args_is_help=True, help="The double-entry ledger.")
app.add_typer(db_app, name="db")
app.add_typer(accounts_app, name="accounts")
app.add_typer(credentials_app, name="credentials")
app.add_typer(certs_app, name="certs")
app.add_typer(ledger_app, name="ledger")
app.add_typer(webhooks_app, name="webhooks")
accounts_app.add_typer(keys_app, name="keys")


# --- serving --------------------------------------------------------------------------------


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8080,
    no_worker: Annotated[bool, typer.Option("--no-worker", help="API only, no job worker")] = False,
    workers: Annotated[int, typer.Option(help="API processes")] = 1,
) -> None:
    """Serve the API, with the job worker in-process unless --no-worker.

    Prints where it listens and the addresses of its pages; PIXGATE_PUBLIC_URL, unset, is
    this address (the one charges' QR codes carry)."""
    import structlog
    import uvicorn

    from pixgate.core import metrics
    from pixgate.core.logging import configure
    from pixgate.core.settings import Settings

    settings = Settings()
    json_logs = configure(json=settings.log_json, level=settings.log_level)
    url = database_url(settings)
    base = serving.local_url(host, port)
    derived = "public_url" not in settings.model_fields_set
    public_url = base if derived else settings.public_url
    log = structlog.get_logger(__name__)
    if json_logs:  # the output is a collector's: JSON lines only (the server logs the webhooks)
        log.info("serve.listening", **serving.addresses(base, public_url, derived=derived))
    else:
        for line in serving.banner(base, public_url, derived=derived, with_worker=not no_worker):
            typer.echo(line)
        _print_undeliverable_webhooks()
    problem = None if derived else serving.public_url_mismatch(public_url, host, port)
    if problem is not None:
        log.warning("serve.public_url_mismatch", problem=problem)
    # uvicorn re-raises SIGTERM after its graceful shutdown; exiting through SystemExit
    # instead lets the embedded server's exit hook stop PostgreSQL when we are the last user.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.environ["PIXGATE_DATABASE_URL"] = url
    os.environ["PIXGATE_PUBLIC_URL"] = public_url
    os.environ["PIXGATE_SERVE_WITH_WORKER"] = "false" if no_worker else "true"
    # several processes on one port: a scrape sums them all, whichever answers it
    with metrics.shared_by(workers):
        uvicorn.run(
            "pixgate.app:app_from_environment",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
            access_log=False,
            proxy_headers=True,
            # Then the lifespan stops the in-process worker, which has the same grace for its jobs.
            timeout_graceful_shutdown=math.ceil(settings.shutdown_grace_s),
        )


def _print_undeliverable_webhooks() -> None:
    """The registered URLs this server's settings refuse, one line each (the server logs
    their ids as it starts)."""
    from pixgate.webhooks.service import reachability

    for refused in run(reachability.undeliverable):
        typer.echo(
            f"warning: webhook {refused.endpoint_id} of account {refused.account_id}, "
            f"{refused.url}, will not be delivered: {refused.reason}",
            err=True,
        )


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(help="jobs in flight at once (default: PIXGATE_JOB_CONCURRENCY)")
    ] = None,
    metrics_port: Annotated[
        int, typer.Option(help="serve this process's Prometheus metrics on this port (0: none)")
    ] = 0,
    metrics_host: Annotated[str, typer.Option(help="address the metrics listen on")] = "127.0.0.1",
) -> None:
    """Run job workers only (scale-out): settlement, webhook delivery, scheduled work."""
    import asyncio

    from pixgate.core import metrics
    from pixgate.core.logging import configure
    from pixgate.core.settings import Settings
    from pixgate.gc_tuning import tune_for_serving
    from pixgate.jobs.worker import Worker

    settings = Settings()
    configure(json=settings.log_json, level=settings.log_level)
    tune_for_serving()

    async def loop(rt: Runtime) -> None:
        runner = Worker(rt, concurrency=concurrency)
        event_loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            event_loop.add_signal_handler(sig, runner.stop)
        stop_metrics = metrics.serve(rt.db, metrics_host, metrics_port) if metrics_port else None
        try:
            await runner.run()
        finally:
            if stop_metrics is not None:
                stop_metrics()

    run(loop, first_connections=None)


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument()] = "head") -> None:
    """Apply the database migrations."""
    import asyncio

    from pixgate.core.db import embedded, migrate
    from pixgate.core.settings import Settings
    from pixgate.runtime import resolve_database_url

    settings = Settings()
    url = resolve_database_url(settings)
    if settings.database_url is None:
        asyncio.run(embedded.ensure_database(url))
    migrate.upgrade(url, revision)
    typer.echo(f"database at {revision}")


# --- accounts -------------------------------------------------------------------------------


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


# --- credentials and certificates ----------------------------------------------------------


@credentials_app.command("create")
def credentials_create(
    account: Annotated[int, typer.Option(help="account id")],
    tls_client_auth: Annotated[
        bool,
        typer.Option(
            "--tls-client-auth",
            help="no secret: the client authenticates by the account's registered client "
            "certificate and its clientId (OAuth 2.0 tls_client_auth, RFC 8705)",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Create another credential for an account (the secret is shown once)."""
    from pixgate.accounts.rules.clients import AuthMethod
    from pixgate.accounts.service import accounts

    method = AuthMethod.TLS_CLIENT_AUTH if tls_client_auth else AuthMethod.CLIENT_SECRET
    created = run(lambda rt: accounts.create_credential(rt, account, method=method))
    data: dict[str, Any] = {
        "accountId": created.account_id,
        "clientId": created.client_id,
        "authMethod": created.auth_method.value,
    }
    if created.client_secret is not None:
        data["clientSecret"] = created.client_secret
    if as_json:
        emit_json(data)
        return
    console.print(f"clientId {created.client_id}")
    if created.client_secret is None:
        console.print("authMethod tls_client_auth (the account's client certificate, no secret)")
    else:
        console.print(f"clientSecret {created.client_secret}")


@credentials_app.command("revoke")
def credentials_revoke(client_id: Annotated[str, typer.Argument(metavar="CLIENT_ID")]) -> None:
    """Revoke a credential: no new token can be issued with it."""
    from pixgate.accounts.service import accounts

    run(lambda rt: accounts.revoke_credential(rt, client_id))
    typer.echo(f"credential {client_id} revoked")


@certs_app.command("register")
def certs_register(
    account: Annotated[int, typer.Option(help="account id")],
    pem: Annotated[Path, typer.Option(help="PEM file of the certificate", exists=True)],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Register a client certificate for an account; prints its SHA-256 fingerprint."""
    from pixgate.accounts.service import accounts

    text = pem.read_text()
    fingerprint = run(lambda rt: accounts.register_certificate(rt, account, text))
    if as_json:
        emit_json({"accountId": account, "certificateFingerprint": fingerprint})
    else:
        typer.echo(fingerprint)


@certs_app.command("revoke")
def certs_revoke(fingerprint: Annotated[str, typer.Argument(metavar="FINGERPRINT")]) -> None:
    """Revoke a certificate (any case, colons allowed)."""
    from pixgate.accounts.service import accounts

    normalized = run(lambda rt: accounts.revoke_certificate(rt, fingerprint))
    typer.echo(f"certificate {normalized} revoked")


# --- ledger ---------------------------------------------------------------------------------


@ledger_app.command("verify")
def ledger_verify() -> None:
    """Check that every balance equals its journal and every entry balances; exit 1 if not."""
    from pixgate.ledger.service import verify

    async def check(rt: Runtime) -> list[str]:
        async with rt.db.connection() as conn:
            return await verify.problems(conn)

    found = run(check)
    for problem in found:
        typer.echo(problem)
    if found:
        raise typer.Exit(1)
    typer.echo("ledger balances")
