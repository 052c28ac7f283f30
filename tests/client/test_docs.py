"""docs/client.md's first script runs as written against a real gateway, and prints what
the page says it prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pixgate.accounts.service import accounts

DOCS = Path(__file__).resolve().parents[2] / "docs" / "client.md"


def example() -> str:
    found = re.search(r"<!-- client: example -->\n```python\n(.*?)```", DOCS.read_text(), re.S)
    assert found is not None, "docs/client.md lost its example"
    return found.group(1)


def test_the_example_runs_as_the_page_says(
    gateway: str, account: accounts.NewAccount, tmp_path: Path
) -> None:
    (tmp_path / "account.json").write_text(
        json.dumps(
            {
                "clientId": account.client_id,
                "clientSecret": account.client_secret,
                "certificatePem": account.certificate_pem,
            }
        )
    )
    ran = subprocess.run(
        [sys.executable, "-c", example()],
        cwd=tmp_path,
        env=os.environ | {"PIXGATE_URL": gateway},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "1000.00"
    assert lines[1].endswith(" PENDING")
    assert lines[2:] == ["PIX_DUPLICATE_EXTERNAL_ID True", "Pix out 10.00"]
