"""`pixgate db upgrade` takes every URL the gateway takes: several hosts with
`target_session_attrs`, as libpq and asyncpg read them, where a primary and its standbys are
listed and the command must find the one that accepts writes."""

from __future__ import annotations

import asyncio
import subprocess
from urllib.parse import urlparse

from pixgate.core.db import schema_version as schema
from tests.conftest import scratch_database
from tests.processes import PIXGATE, free_port, server_env


def several_hosts(url: str) -> str:
    """`url` with a host before it where nothing listens: the command must go on to the next."""
    parsed = urlparse(url)
    hosts = f"127.0.0.1:{free_port()},{parsed.hostname}:{parsed.port or 5432}"
    credentials, at, _ = parsed.netloc.rpartition("@")
    return f"postgresql://{credentials}{at}{hosts}{parsed.path}?target_session_attrs=read-write"


def test_db_upgrade_takes_several_hosts() -> None:
    with scratch_database("base") as url:
        upgraded = subprocess.run(
            [PIXGATE, "db", "upgrade"],
            env=server_env(several_hosts(url)),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert upgraded.returncode == 0, upgraded.stderr
        assert asyncio.run(schema.is_current(url))
