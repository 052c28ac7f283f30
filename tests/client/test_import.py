"""Importing the client starts nothing: it reads no settings and builds no gateway."""

from __future__ import annotations

import os
import subprocess
import sys


def test_the_client_imports_without_settings_or_a_database() -> None:
    """Settings that would refuse to load (and a database that does not exist) change
    nothing: importing the client reads neither."""
    env = os.environ | {
        "PIXGATE_TOKEN_TTL": "not a number",
        "PIXGATE_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
    }
    script = (
        "import sys\n"
        "from pixgate.client import AsyncClient, Client, errors, webhooks\n"
        "assert 'pixgate.app' not in sys.modules\n"
        "from pixgate.core.settings import Settings\n"
        "try:\n"
        "    Settings()\n"
        "except ValueError:\n"
        "    print('settings refused')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "settings refused\n"
