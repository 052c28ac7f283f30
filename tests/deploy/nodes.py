"""compose.ha.yaml's database services on this machine: etcd, and the two PostgreSQL nodes
Patroni runs, each from its own command, environment and the mounted Patroni configuration,
with Debian's patroni, etcd-server and PostgreSQL in place of the image's (its Dockerfile,
deploy/compose/patroni/Dockerfile, installs the same packages)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import patroni
from tests.deploy.compose import ROOT, environment, mounts
from tests.processes import free_port

DATABASE_SERVICES = ("etcd", "postgres", "postgres-2")
PATRONI_DIR = ROOT / "deploy" / "compose" / "patroni"
VOLUME = "/var/lib/postgresql"
"""Where each database service's volume is mounted (the image's postgres user's home)."""

_ADDRESS = re.compile(r"(?<![\w.-])(0\.0\.0\.0|etcd|postgres-2|postgres):(\d+)\b")


@dataclass(frozen=True)
class Nodes:
    """Where each thing a database service names is on this machine, and nothing else
    changes:

    - a service's port as compose's network names it (`postgres-2:5432`, `etcd:2379`) is a
      free port of the loopback, and the address a service listens on (`0.0.0.0:5432`) that
      same port of its own;
    - a service's volume, /var/lib/postgresql, is a directory of its own under `home`;
    - /etc/patroni, where deploy/compose/patroni is mounted, is a copy of that directory whose
      patroni.yml names the copy's script (the one path in the file);
    - the image's PATH, which holds PostgreSQL's programs, is this machine's with Debian's
      PostgreSQL first; the image's user, postgres, is this machine's (when we are root).
    """

    home: Path
    services: dict[str, dict[str, Any]]
    ports: dict[str, int]

    @classmethod
    def prepare(cls, home: Path, services: dict[str, dict[str, Any]]) -> Nodes:
        ports: dict[str, int] = {}
        for name in DATABASE_SERVICES:
            for address in _ADDRESS.finditer(json.dumps(services[name])):
                host = name if address[1] == "0.0.0.0" else address[1]
                ports.setdefault(f"{host}:{address[2]}", free_port())
        nodes = cls(home, services, ports)
        shutil.copytree(PATRONI_DIR, nodes.patroni_dir)
        config = nodes.patroni_dir / "patroni.yml"
        config.write_text(config.read_text().replace("/etc/patroni", str(nodes.patroni_dir)))
        for name in DATABASE_SERVICES:
            nodes.volume(name).mkdir()
        patroni.as_user(home, *(nodes.volume(name) for name in DATABASE_SERVICES))
        return nodes

    @property
    def patroni_dir(self) -> Path:
        return self.home / "etc-patroni"

    def volume(self, name: str) -> Path:
        return self.home / name

    def value(self, text: str, name: str | None = None) -> str:
        """`text` (a command's argument, an environment value; of the service `name`) with
        its addresses and paths as they are here."""

        def here(match: re.Match[str]) -> str:
            host = name if match[1] == "0.0.0.0" else match[1]
            return f"127.0.0.1:{self.ports[f'{host}:{match[2]}']}"

        text = _ADDRESS.sub(here, text)
        if name is not None:
            text = text.replace(VOLUME, str(self.volume(name)))
            for target, path in mounts(self.services[name]).items():
                if path == PATRONI_DIR:
                    text = text.replace(target, str(self.patroni_dir))
        return text

    def argv(self, name: str) -> list[str]:
        """The service's command, its program this machine's."""
        program, *arguments = [str(part) for part in self.services[name]["command"]]
        return [shutil.which(program) or program, *(self.value(a, name) for a in arguments)]

    def env(self, name: str) -> dict[str, str]:
        own = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
        own["PATH"] = f"{patroni.BINDIR}:{own['PATH']}"
        given = environment(self.services[name])
        return own | {key: self.value(value, name) for key, value in given.items()}

    def etcd(self, log: Path) -> subprocess.Popen[bytes]:
        """The etcd service's command, started."""
        with log.open("ab") as output:
            return subprocess.Popen(
                self.argv("etcd"),
                env=self.env("etcd"),
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.volume("etcd"),
                **patroni.as_user(),
            )

    def node(self, name: str) -> patroni.Node:
        """A PostgreSQL service's command (Patroni), started."""
        env = self.env(name)
        return patroni.Node(
            name,
            self.ports[f"{name}:5432"],
            self.ports[f"{name}:8008"],
            self.volume(name),
            Path(env["PATRONI_POSTGRESQL_DATA_DIR"]),
            self.argv(name),
            env,
        )
