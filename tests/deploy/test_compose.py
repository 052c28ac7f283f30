"""compose.yaml, run as its services would run, on this machine (no Docker engine here): the
migrate service's command, then the gateway's command line, the worker's, and nginx with the
site the nginx service installs, each with its own environment from the file and `.env` (the
shipped example, filled in), against this machine's PostgreSQL (a scratch database) and Redis.
Only `ThisMachine` (tests/deploy/compose.py) changes what they name. A client then goes through
nginx with its certificate as an integrator would, the worker's metrics are scraped at the port
its command names, and the Dockerfile's command and health check are run too, so neither file
can drift from what is tested. deploy/prometheus/prometheus.yml is read against the services.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import orjson
import pytest
import yaml

from pixgate.core.settings import Settings
from tests.app.scrapes import Samples, samples, value
from tests.conftest import scratch_database
from tests.deploy.compose import (
    COMPOSE_YAML,
    DOCKERIGNORE,
    ROOT,
    ThisMachine,
    command,
    environment,
    exec_form,
    image_command,
    instructions,
    load,
    mounts,
    option,
    seconds,
    setting_names,
    variables,
)
from tests.deploy.front import CASH_OUT, TOKEN, ClientCertificate, Front, client, needs_nginx
from tests.deploy.front import nginx_front as front_of
from tests.processes import free_port, started

VALUES = variables()
COMPOSE = load(VALUES)
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
HOSTNAME = VALUES["PIXGATE_HOSTNAME"]
PROMETHEUS_YML = ROOT / "deploy" / "prometheus" / "prometheus.yml"


@dataclass(frozen=True)
class Stack:
    machine: ThisMachine
    api: str  # the gateway, bypassing nginx (for its health check only)
    front: Front

    def env(self, service: str) -> dict[str, str]:
        return self.machine.process_env(SERVICES[service])

    def run(self, service: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
        return run(self.machine, service, argv)


def run(machine: ThisMachine, service: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` (in the image's terms) in the environment of `service`, as `docker compose
    exec` or `run` would, to its end."""
    return subprocess.run(
        machine.argv(argv),
        env=machine.process_env(SERVICES[service]),
        capture_output=True,
        text=True,
    )


def site_script() -> Path:
    """The script compose.yaml mounts among the nginx image's /docker-entrypoint.d/ ones."""
    (script,) = [
        path
        for target, path in mounts(SERVICES["nginx"]).items()
        if target.startswith("/docker-entrypoint.d/")
    ]
    return script


def install_site(machine: ThisMachine) -> Path:
    """What the nginx service does before nginx starts: the image runs its executable
    /docker-entrypoint.d/ scripts, here the one compose.yaml mounts there."""
    nginx, script = SERVICES["nginx"], site_script()
    assert os.access(script, os.X_OK), f"{script.name}: the image runs only executable scripts"
    done = subprocess.run(
        [str(script)], env=machine.process_env(nginx), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return Path(machine.path(nginx["environment"]["PIXGATE_NGINX_SITE"], nginx))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """migrate, then the gateway and nginx; the worker is started by the test that needs it."""
    with scratch_database("base") as url:
        machine = ThisMachine(url, tmp_path_factory.mktemp("conf.d"))
        migrated = run(machine, "migrate", command(SERVICES["migrate"]))
        assert migrated.returncode == 0, migrated.stderr
        gateway = SERVICES["gateway"]
        argv, env = machine.gateway_argv(command(gateway)), machine.process_env(gateway)
        with (
            started(argv, env) as (api, _),
            front_of(api, source=install_site(machine), server_name=HOSTNAME) as front,
        ):
            yield Stack(machine, api, front)


@contextmanager
def worker_service(stack: Stack, log: Path) -> Iterator[str]:
    """The worker service's command; yields the URL of its metrics. Stopped as `docker compose
    stop` stops it (SIGTERM), which it must obey within its stop_grace_period."""
    metrics_port = free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            stack.machine.worker_argv(command(SERVICES["worker"]), metrics_port),
            env=stack.env("worker"),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            yield f"http://127.0.0.1:{metrics_port}/metrics"
        finally:
            process.terminate()
            try:
                code = process.wait(timeout=seconds(SERVICES["worker"]["stop_grace_period"]))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
    assert code == 0, log.read_text()


def health_check(service: str) -> list[str]:
    test = SERVICES[service]["healthcheck"]["test"]
    if test[0] == "CMD-SHELL":
        return ["sh", "-c", test[1]]
    assert test[0] == "CMD", test
    return [str(part) for part in test[1:]]


async def balance(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    answer = await http.get("/api/balance", headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return {name: body[name] for name in ("grossBalance", "blockedBalance", "netBalance")}


async def settled(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    """The balance once nothing is blocked any more, or as it is after 30 s."""
    found, deadline = await balance(http, headers), time.monotonic() + 30
    while found["blockedBalance"] and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        found = await balance(http, headers)
    return found


async def counted(metrics: str, name: str, **labels: str) -> Samples:
    """A scrape of `metrics` once it counts the series `name` with `labels`, or the last one
    after 30 s (the worker may count it just after the balance changed)."""
    found: Samples = {}
    deadline = time.monotonic() + 30
    async with httpx.AsyncClient() as http:
        while True:
            with suppress(httpx.TransportError):
                found = samples((await http.get(metrics)).text)
            if value(found, name, **labels) or time.monotonic() > deadline:
                return found
            await asyncio.sleep(0.2)


# --- the services, run -------------------------------------------------------------------


@needs_nginx
async def test_a_payment_through_nginx_is_settled_by_the_worker_service(
    stack: Stack, tmp_path: Path
) -> None:
    """An account made with the CLI in the gateway's environment (`docker compose exec
    gateway pixgate accounts create`); through nginx, with its certificate: a token, the
    balance, a cash-out that waits until the worker service runs its settlement job, which
    the worker's metrics port then counts."""
    created = stack.run(
        "gateway",
        ["pixgate", "accounts", "create", "--name", "Padaria", "--balance", "100", "--json"],
    )
    assert created.returncode == 0, created.stderr
    account = orjson.loads(created.stdout)
    certificate = ClientCertificate(account["certificatePem"], account["privateKeyPem"])
    async with client(stack.front, certificate, tmp_path) as http:
        token = await http.post(
            TOKEN, json={"clientId": account["clientId"], "clientSecret": account["clientSecret"]}
        )
        assert token.status_code == 201, token.text
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        assert await balance(http, headers) == {
            "grossBalance": 100.0,
            "blockedBalance": 0.0,
            "netBalance": 100.0,
        }
        paid = await http.post(
            CASH_OUT,
            headers=headers,
            json={
                "value": "10.50",
                "externalId": "compose-1",
                "details": {
                    "key": "123e4567-e12b-42d3-a456-426614174000",
                    "keyType": "RANDOM",
                    "name": "Fulano",
                    "document": "52998224725",
                },
            },
        )
        assert paid.status_code == 201, paid.text
        assert paid.json()["status"] == "PENDING"
        # The gateway runs no jobs (--no-worker): the amount stays held until the worker runs.
        assert (await balance(http, headers))["blockedBalance"] == 10.5
        log = tmp_path / "worker.log"
        with worker_service(stack, log) as metrics:
            after = await settled(http, headers)
            settlement = {"kind": "cash_out", "outcome": "confirmed"}
            scraped = await counted(metrics, "pixgate_settlements_total", **settlement)
    settled_balance = {"grossBalance": 89.5, "blockedBalance": 0.0, "netBalance": 89.5}
    assert after == settled_balance, log.read_text()
    assert value(scraped, "pixgate_settlements_total", **settlement) == 1, log.read_text()


@needs_nginx
def test_migrate_runs_again_on_every_start(stack: Stack) -> None:
    """`docker compose up` runs the migrate service each time: on a database already at head
    it changes nothing and succeeds, so the gateway and worker start."""
    again = stack.run("migrate", command(SERVICES["migrate"]))
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "database at head"


@needs_nginx
def test_plain_http_redirects_to_the_host_name_of_env(stack: Stack) -> None:
    """The site nginx runs is the shipped one with PIXGATE_HOSTNAME filled in."""
    answer = httpx.get(f"{stack.front.http}/api/balance?x=1")
    assert answer.status_code == 301
    assert answer.headers["location"] == f"https://{HOSTNAME}/api/balance?x=1"


@needs_nginx
def test_the_health_checks_pass_on_the_running_services(stack: Stack) -> None:
    """The image's check (the gateway's) and nginx's, Postgres's and Redis's, each run as
    written, against the running services; the image's fails when no API answers."""
    machine, api_port = stack.machine, int(stack.api.rsplit(":", 1)[1])
    checks = {
        "gateway (the image's)": machine.port(exec_form("HEALTHCHECK"), 8080, api_port),
        "nginx": machine.port(health_check("nginx"), 443, stack.front.tls_port),
        "postgres": health_check("postgres"),
        "redis": health_check("redis"),
    }
    for name, argv in checks.items():
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, f"{name}: {done.stderr}"
    nothing = machine.port(exec_form("HEALTHCHECK"), 8080, free_port())
    assert subprocess.run(nothing, capture_output=True, timeout=10).returncode != 0


# --- the files, read -----------------------------------------------------------------------

SPEC = Path(__file__).with_name("compose-spec.json")
"""The Compose Specification's JSON schema, which `docker compose` validates a file against:
schema/compose-spec.json of github.com/compose-spec/compose-spec (Apache-2.0), commit
170098ba07d9f53c383a41bfd4c5166b0a4529a6."""


def test_compose_yaml_is_a_compose_file() -> None:
    """Valid as written and once interpolated: a misspelt key or a condition compose does not
    know fails here, though no `docker compose` runs on this machine."""
    validator = jsonschema_rs.validator_for(orjson.loads(SPEC.read_bytes()))
    for document in (yaml.safe_load(COMPOSE_YAML.read_text()), COMPOSE):
        assert [error.message for error in validator.iter_errors(document)] == []


def test_only_nginx_reaches_the_api() -> None:
    """pixgate trusts the certificate header as it arrives: its port is on the loopback of
    nginx's network namespace, published by no service; only nginx publishes ports, and the
    database and Redis are on the internal network alone."""
    gateway = SERVICES["gateway"]
    assert gateway["network_mode"] == "service:nginx"
    # A namespace lives as long as its container: compose restarts the gateway with nginx.
    assert gateway["depends_on"]["nginx"] == {"condition": "service_started", "restart": True}
    argv = command(gateway)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert {name for name, service in SERVICES.items() if "ports" in service} == {"nginx"}
    assert COMPOSE["networks"]["backend"] == {"internal": True}
    assert SERVICES["postgres"]["networks"] == SERVICES["redis"]["networks"] == ["backend"]


def test_prometheus_scrapes_each_service_where_it_listens() -> None:
    """deploy/prometheus/prometheus.yml, run in nginx's namespace: the API at the gateway's
    --host and --port, and every container of the worker service, by its name, at its
    --metrics-port, which the worker opens on all its addresses and no service publishes."""
    config = yaml.safe_load(PROMETHEUS_YML.read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    gateway, worker = command(SERVICES["gateway"]), command(SERVICES["worker"])
    api = f"{option(gateway, '--host')}:{option(gateway, '--port')}"
    assert jobs["pixgate-api"]["static_configs"] == [{"targets": [api]}]
    workers = {"names": ["worker"], "type": "A", "port": int(option(worker, "--metrics-port"))}
    assert jobs["pixgate-worker"]["dns_sd_configs"] == [workers]
    assert option(worker, "--metrics-host") == "0.0.0.0"
    assert set(SERVICES["worker"]["networks"]) & set(SERVICES["nginx"]["networks"])


def test_the_api_and_the_worker_wait_for_the_migration() -> None:
    for name in ("gateway", "worker"):
        assert SERVICES[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    assert SERVICES["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert SERVICES["migrate"]["restart"] == "no"
    assert "--no-worker" in command(SERVICES["gateway"]), "jobs are the worker service's"


def test_docker_waits_for_the_graceful_shutdown() -> None:
    """`docker compose stop` kills after stop_grace_period: longer than the gateway's and the
    worker's own grace for requests and jobs in flight."""
    grace = Settings.model_fields["shutdown_grace_s"].default
    for name in ("gateway", "worker"):
        assert seconds(SERVICES[name]["stop_grace_period"]) > grace


def test_the_variables_are_settings_or_the_files_own() -> None:
    """Every PIXGATE_ name a pixgate service gets is a setting pixgate reads; the names of
    compose.yaml's own variables are none, since pixgate would read them from a `.env` it
    were started beside."""
    own = {name for name in VALUES if name.startswith("PIXGATE_")}
    assert own == {"PIXGATE_HOSTNAME", "PIXGATE_TLS_DIR", "PIXGATE_API_PROCESSES"}
    assert not own & setting_names()
    for name in ("gateway", "worker", "migrate"):
        assert SERVICES[name]["env_file"] == [{"path": "pixgate.env", "required": False}]
        given = {key for key in environment(SERVICES[name]) if key.startswith("PIXGATE_")}
        assert given <= setting_names(), name


@pytest.mark.parametrize("hostname", ["", "pay.example.net/", "a b", "-x;rm", ".example.net"])
def test_nginx_refuses_to_start_without_a_host_name(tmp_path: Path, hostname: str) -> None:
    """The site script fails (and with it, the nginx container) rather than write a site for a
    name that is none: it goes into the file as it is."""
    machine = ThisMachine("", tmp_path)
    env = machine.process_env(SERVICES["nginx"]) | {"PIXGATE_HOSTNAME": hostname}
    done = subprocess.run([str(site_script())], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "PIXGATE_HOSTNAME" in done.stderr
    assert not (tmp_path / "default.conf").exists()


def test_the_tls_directory_is_where_the_site_reads_its_certificate() -> None:
    targets = [volume.split(":")[1] for volume in SERVICES["nginx"]["volumes"]]
    assert f"/etc/nginx/tls/{HOSTNAME}" in targets


def test_the_image_runs_pixgate_serve_as_a_user() -> None:
    """Its command is one the CLI has; it runs as an unprivileged user, from the wheel stage
    built with constraints.txt."""
    argv = exec_form("CMD")
    assert argv == ["pixgate", "serve"]
    helped = subprocess.run([*image_command(argv), "--help"], capture_output=True)
    assert helped.returncode == 0, helped.stderr
    found = instructions()
    assert [args for key, args in found if key == "USER"] == ["10001:10001"]
    assert [args.split()[0] for key, args in found if key == "FROM"] == ["python:3.11-slim"] * 2
    assert any("pip wheel" in args and "constraints.txt" in args for key, args in found)


def test_the_build_context_holds_what_the_build_copies() -> None:
    """.dockerignore lets through exactly the files the first stage copies."""
    copied = set()
    for key, args in instructions():
        if key == "COPY" and not args.startswith("--"):
            copied |= set(args.split()[:-1])
    allowed = {
        line[1:].rstrip("/") for line in DOCKERIGNORE.read_text().splitlines() if line[:1] == "!"
    }
    assert allowed == copied
    assert all((ROOT / name).exists() for name in copied)
