"""`PIXGATE_PROVIDER` names the settling bank behind the provider interface: the runtime
builds the one the settings name, and a name no provider answers to is refused at start."""

from __future__ import annotations

from typing import ClassVar, get_args

import pytest
from pydantic import ValidationError

from pixgate.core.db.pool import Database
from pixgate.core.settings import Settings
from pixgate.provider import choice
from pixgate.runtime import Runtime, build_runtime
from pixgate.sandbox.bank import SandboxBank


class RecordingBank(SandboxBank):
    """The sandbox, remembering the settings it was built from."""

    built: ClassVar[list[Settings]] = []

    def __init__(self, settings: Settings, db: Database) -> None:
        super().__init__(settings, db)
        RecordingBank.built.append(settings)


async def test_the_runtime_builds_the_provider_the_settings_name(
    base_settings: Settings, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(choice.PROVIDERS, "sandbox", RecordingBank)
    RecordingBank.built.clear()
    async with build_runtime(base_settings, database_url) as runtime:
        assert type(runtime.provider) is RecordingBank
    assert RecordingBank.built == [base_settings]


def test_the_sandbox_is_the_default_and_is_named_by_pixgate_provider(
    monkeypatch: pytest.MonkeyPatch, rt: Runtime
) -> None:
    monkeypatch.delenv("PIXGATE_PROVIDER", raising=False)
    assert Settings().provider == "sandbox"
    monkeypatch.setenv("PIXGATE_PROVIDER", "sandbox")
    assert Settings().provider == "sandbox"
    assert type(rt.provider) is SandboxBank


def test_a_provider_no_bank_answers_to_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIXGATE_PROVIDER", "banco-real")
    with pytest.raises(ValidationError, match="provider"):
        Settings()


def test_every_name_the_settings_allow_has_a_provider() -> None:
    allowed = get_args(Settings.model_fields["provider"].annotation)
    assert sorted(allowed) == sorted(choice.PROVIDERS)
