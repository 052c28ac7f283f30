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
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pixgate.cli import help_format, serving
from pixgate.cli.accounts import accounts_app
from pixgate.cli.common import (
    console,
    database_url,
    emit_json,
    exit_without_collecting,
    resolved_url,
    run,
)
from pixgate.cli.webhooks import webhooks_app

if TYPE_CHECKING:
    from pixgate.runtime import Runtime

help_format.install()
exit_without_collecting()
app = typer.Typer(no_args_is_help=True, help="pixgate: a self-hostable PIX payment gateway.")
db_app = typer.Typer(no_args_is_help=True, help="Database schema.")
credentials_app = typer.Typer(no_args_is_help=True, help="Client credentials.")
certs_app = typer.Typer(no_args_is_help=True, help="Client certificates.")
ledger_app = typer.Typer(no_args_is_help=True, help="The double-entry ledger.")
app.add_typer(db_app, name="db")
app.add_typer(accounts_app, name="accounts")
app.add_typer(credentials_app, name="credentials")
app.add_typer(certs_app, name="certs")
app.add_typer(ledger_app, name="ledger")
app.add_typer(webhooks_app, name="webhooks")


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

    from pixgate.cli.http_protocol import HttpProtocol
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
            http=HttpProtocol,
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
    """Apply the database migrations (to PIXGATE_DIRECT_DATABASE_URL when set: PostgreSQL
    itself, not a pooler)."""
    import asyncio

    from pixgate.core.db import embedded, migrate
    from pixgate.core.settings import Settings

    settings = Settings()
    url = settings.direct_database_url or resolved_url(settings)
    if settings.database_url is None:
        asyncio.run(embedded.ensure_database(url))
    migrate.upgrade(url, revision)
    typer.echo(f"database at {revision}")


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
