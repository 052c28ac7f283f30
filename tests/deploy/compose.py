"""compose.yaml (alone, or with compose.ha.yaml over it) and the Dockerfile as the tests read
them, and the mappings that move their services from the compose network onto this machine.

compose.yaml is read as `docker compose` reads it: YAML (anchors and merge keys included),
then `${VARIABLE}` interpolation from the variables of `.env`, here the shipped example
(deploy/compose/env.example) with the values an operator must fill in; a second file is
merged over it by compose's rules. A service then runs on this machine with its own command
and environment; only `ThisMachine` (and, for compose.ha.yaml's database nodes, `Nodes`)
changes them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from pixgate.core.settings import Settings
from tests.processes import PIXGATE

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_YAML = ROOT / "compose.yaml"
COMPOSE_HA_YAML = ROOT / "compose.ha.yaml"
ENV_EXAMPLE = ROOT / "deploy" / "compose" / "env.example"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

FILLED_IN = {"PIXGATE_HOSTNAME": "pay.example.net", "POSTGRES_PASSWORD": "0a1b2c3d4e5f"}
"""What an operator writes into the example's empty values."""


def env_file(path: Path) -> dict[str, str]:
    """A `.env` file's `NAME=value` lines (comments and blank lines skipped)."""
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, separator, value = line.partition("=")
            assert separator, f"{path.name}: not NAME=value: {line!r}"
            pairs[name.strip()] = value.strip()
    return pairs


def variables() -> dict[str, str]:
    """The example `.env`, filled in: every value it leaves empty gets one."""
    found = env_file(ENV_EXAMPLE)
    assert {name for name, value in found.items() if not value} == set(FILLED_IN)
    return found | FILLED_IN


# $$, ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}, $NAME
_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}|(?P<bare>\w+))"
)


def interpolate(text: str, values: dict[str, str]) -> str:
    """Compose's interpolation of one string: an unset required variable fails the test with
    the file's own message, as `docker compose` fails with it."""

    def one(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        name = match["name"] or match["bare"]
        value, op = values.get(name), match["op"] or ""
        unset = value is None or (op.startswith(":") and value == "")
        if op.endswith("?") and unset:
            raise AssertionError(f"compose.yaml: {name}: {match['arg']}")
        if op.endswith("-") and unset:
            return str(match["arg"])
        return value or ""

    return _VARIABLE.sub(one, text)


def _interpolated(node: Any, values: dict[str, str]) -> Any:
    if isinstance(node, dict):
        return {key: _interpolated(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_interpolated(item, values) for item in node]
    return interpolate(node, values) if isinstance(node, str) else node


def load(values: dict[str, str], *overrides: Path) -> dict[str, Any]:
    """compose.yaml, each of `overrides` merged over it in turn (`docker compose -f
    compose.yaml -f ...`), with `values` interpolated."""
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE_YAML.read_text())
    for path in overrides:
        loaded = merge(loaded, yaml.safe_load(path.read_text()))
    interpolated: dict[str, Any] = _interpolated(loaded, values)
    return interpolated


def merge(base: Any, override: Any, path: tuple[str, ...] = ()) -> Any:
    """Compose's merge of two files' trees: mappings merge key by key; a sequence is appended
    to, except a command or a health check's test, which is replaced, and volumes, one per
    target in the container (the later file's wins)."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge(base[key], value, (*path, key)) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(override, list):
        if path[-1:] in (("command",), ("entrypoint",)) or path[-2:] == ("healthcheck", "test"):
            return override
        if path[-1:] == ("volumes",):
            targets = {volume.split(":")[1] for volume in override}
            return [v for v in base if v.split(":")[1] not in targets] + override
        return base + override
    return override


def command(service: dict[str, Any]) -> list[str]:
    """A service's command, in either of compose's forms."""
    given = service["command"]
    return shlex.split(given) if isinstance(given, str) else [str(part) for part in given]


def option(argv: list[str], name: str) -> str:
    """The value of a command's `name` option (`--port 8080`: "8080")."""
    return argv[argv.index(name) + 1]


def env_files(service: dict[str, Any]) -> dict[str, str]:
    """The settings of a service's env_file entries: a file that is not there is an empty
    one if the entry says it is not required (compose fails otherwise)."""
    found: dict[str, str] = {}
    for entry in service.get("env_file", []):
        path, required = (
            (entry, True) if isinstance(entry, str) else (entry["path"], entry["required"])
        )
        if (ROOT / path).exists() or required:
            found |= env_file(ROOT / path)
    return found


def environment(service: dict[str, Any]) -> dict[str, str]:
    """What a service's process finds in its environment: its env_file entries, then its
    `environment`, which wins."""
    found = env_files(service)
    given = service.get("environment", {})
    if isinstance(given, list):
        given = dict(item.split("=", 1) for item in given)
    return found | {name: str(value) for name, value in given.items()}


def mounts(service: dict[str, Any]) -> dict[str, Path]:
    """A service's bind mounts from this repository: the path in the container -> the file
    here."""
    found = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("./"):
            found[target] = ROOT / source
    return found


def setting_names() -> set[str]:
    """The environment variables pixgate's settings are read from."""
    return {f"PIXGATE_{name.upper()}" for name in Settings.model_fields}


def seconds(duration: str) -> float:
    """A compose duration of whole units: 30s, 2m, 1m30s."""
    units = {"h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+)([hms])", duration)
    assert "".join(f"{n}{u}" for n, u in parts) == duration, duration
    return float(sum(int(n) * units[u] for n, u in parts))


# --- the one mapping ---------------------------------------------------------------------


def image_command(argv: list[str]) -> list[str]:
    """`argv` as the image runs it, its `pixgate` or `python` this checkout's virtualenv's."""
    executable = {"pixgate": PIXGATE, "python": sys.executable}.get(argv[0], argv[0])
    return [executable, *argv[1:]]


@dataclass(frozen=True)
class ThisMachine:
    """Where each thing a service names is on this machine, and nothing else changes:

    - `pixgate` and `python` (the image's) are this checkout's virtualenv's;
    - the database URL's server `postgres:5432` is this machine's PostgreSQL, and its user,
      password and database (`pixgate`) become a scratch database's, `database_url`: the test
      server is shared, so the gateway gets a database of its own, empty until `migrate` runs
      (with compose.ha.yaml, `database_url` is the URL the file gives, its nodes where `Nodes`
      runs them);
    - the Redis URL's server `redis:6379` is this machine's Redis, 127.0.0.1:6379;
    - the gateway's `--port 8080` is a free port (processes.started adds it), which the nginx
      site's upstream `127.0.0.1:8080` then names (front.site_config), as does the image's
      health check; nginx's health check's port 443 is front.site_config's TLS port;
    - the worker's `--metrics-port 9101` is a free port; its `--metrics-host 0.0.0.0`, every
      address of the machine, stays, and the test scrapes it on the loopback;
    - in nginx: a bind-mounted file is the repository's file, and nginx's own directory
      `/etc/nginx/conf.d` a temporary one, `conf_d`; its ports (443, 80), its certificate
      files and its log directory are front.site_config's.
    """

    database_url: str
    conf_d: Path

    def argv(self, argv: list[str]) -> list[str]:
        return image_command(argv)

    def gateway_argv(self, argv: list[str]) -> list[str]:
        """Without its `--port 8080`: processes.started gives it a free one."""
        return self.argv(_moved(argv, "--port", "8080", None))

    def worker_argv(self, argv: list[str], metrics_port: int) -> list[str]:
        """Its `--metrics-port 9101` at `metrics_port`, a free one."""
        return self.argv(_moved(argv, "--metrics-port", "9101", metrics_port))

    def port(self, argv: list[str], inside: int, here: int) -> list[str]:
        """A health check's command, its loopback port `inside` the container now `here`."""
        pattern = re.compile(rf"127\.0\.0\.1([:/]){inside}\b")
        return self.argv([pattern.sub(rf"127.0.0.1\g<1>{here}", part) for part in argv])

    def value(self, value: str) -> str:
        scheme = urlsplit(value).scheme if "://" in value else ""
        if scheme == "postgresql":
            assert "@postgres:5432" in urlsplit(value).netloc, value
            return self.database_url
        if scheme == "redis":
            return value.replace("redis://redis:6379/", "redis://127.0.0.1:6379/")
        return value

    def path(self, path: str, service: dict[str, Any]) -> str:
        if path.startswith("/etc/nginx/conf.d/"):
            return str(self.conf_d / path.removeprefix("/etc/nginx/conf.d/"))
        return str(mounts(service).get(path, path))

    def process_env(self, service: dict[str, Any]) -> dict[str, str]:
        """The service's environment, mapped, over this process's own (PATH...) without its
        PIXGATE_ settings."""
        own = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
        mapped = {
            name: self.path(self.value(value), service)
            for name, value in environment(service).items()
        }
        return own | mapped


def _moved(argv: list[str], name: str, inside: str, here: int | None) -> list[str]:
    """`argv` with its option `name inside` set to port `here`, or left out (None)."""
    at = argv.index(name)
    assert argv[at + 1] == inside, argv
    given = [] if here is None else [name, str(here)]
    return argv[:at] + given + argv[at + 2 :]


# --- the Dockerfile ------------------------------------------------------------------------


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, (KEYWORD, arguments), continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    found = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, arguments = line.strip().partition(" ")
            found.append((keyword.upper(), arguments.strip()))
    return found


def exec_form(keyword: str) -> list[str]:
    """The JSON array of the one `keyword` instruction (CMD, or HEALTHCHECK's CMD)."""
    (arguments,) = [args for key, args in instructions() if key == keyword]
    if keyword == "HEALTHCHECK":
        arguments = arguments.partition(" CMD ")[2]
    parsed = json.loads(arguments)
    assert isinstance(parsed, list) and all(isinstance(part, str) for part in parsed)
    return parsed
