"""deploy/systemd's units, for hosts without containers: systemd's own check of them, and their
commands, which must be the ones compose.yaml runs (tests/deploy/test_compose.py runs those) but
for the address a worker's metrics listen on."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import typer

from pixgate.cli.main import app
from tests.deploy.compose import (
    ROOT,
    command,
    env_file,
    interpolate,
    load,
    option,
    setting_names,
    variables,
)
from tests.processes import PIXGATE

UNITS = ROOT / "deploy" / "systemd"
ENV_EXAMPLE = UNITS / "pixgate.env.example"
INSTALLED = "/opt/pixgate/bin/pixgate"
"""Where the units expect pixgate (a virtualenv in /opt/pixgate); this checkout's here."""

OF_COMPOSE = {"pixgate": "gateway", "pixgate-worker": "worker", "pixgate-migrate": "migrate"}
"""Each unit, and the compose service that runs the same command."""

CONTAINER_ONLY = {"pixgate-worker": ["--metrics-host", "0.0.0.0"]}
"""What a unit leaves out of its service's command: a container's every address is its own,
so the worker service listens on them all for Prometheus; a host's are not, so the unit's
worker keeps the CLI's default, the loopback."""


def unit_files() -> list[Path]:
    found = sorted(UNITS.glob("*.service"))
    assert {unit.stem for unit in found} == set(OF_COMPOSE)
    return found


def exec_start(unit: Path) -> list[str]:
    """The unit's one ExecStart, split as systemd splits it, its ${VARIABLES} from the
    example EnvironmentFile."""
    (line,) = re.findall(r"^ExecStart=(.+)$", unit.read_text(), re.MULTILINE)
    return [interpolate(word, env_file(ENV_EXAMPLE)) for word in shlex.split(line)]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    """`systemd-analyze verify`, which needs the command to exist: a copy of each unit whose
    pixgate is this checkout's. Anything it reports (an unknown key, a value it ignores)
    fails the test."""
    copies = []
    for unit in unit_files():
        copy = tmp_path / unit.name
        text = unit.read_text()
        assert text.count(INSTALLED) == 1, unit.name
        copy.write_text(text.replace(INSTALLED, PIXGATE))
        copies.append(str(copy))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *copies], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def on_a_host(unit: Path, argv: list[str]) -> list[str]:
    """The compose service's `argv` without what only its container's command has."""
    left_out = CONTAINER_ONLY.get(unit.stem, [])
    if not left_out:
        return argv
    at = argv.index(left_out[0])
    assert argv[at : at + len(left_out)] == left_out, argv
    return argv[:at] + argv[at + len(left_out) :]


def test_the_units_run_what_compose_runs() -> None:
    values = variables()
    services = load(values)["services"]
    for unit in unit_files():
        argv = exec_start(unit)
        assert argv[0] == INSTALLED
        of_compose = command(services[OF_COMPOSE[unit.stem]])
        assert argv[1:] == on_a_host(unit, of_compose)[1:], unit.name


def test_the_worker_unit_serves_its_metrics_on_the_loopback() -> None:
    """Its port is the compose service's (deploy/prometheus/prometheus.yml's), its address the
    CLI's default."""
    argv = exec_start(UNITS / "pixgate-worker.service")
    assert option(argv, "--metrics-port") == "9101"
    assert "--metrics-host" not in argv
    (host,) = [
        parameter
        for parameter in typer.main.get_command(app).commands["worker"].params
        if parameter.name == "metrics_host"
    ]
    assert host.default == "127.0.0.1"


def test_each_command_parses_with_the_cli() -> None:
    for unit in unit_files():
        argv = exec_start(unit)
        helped = subprocess.run([PIXGATE, *argv[1:], "--help"], capture_output=True, text=True)
        assert helped.returncode == 0, f"{unit.name}: {helped.stderr}"


def test_the_example_names_only_settings() -> None:
    """Every PIXGATE_ name of the example is a setting pixgate reads, but the API processes
    the unit itself reads."""
    names = set(env_file(ENV_EXAMPLE)) - {"PIXGATE_API_PROCESSES"}
    assert names <= setting_names(), names - setting_names()
