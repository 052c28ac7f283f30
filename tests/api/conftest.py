"""Fixtures of the API tests: a live webhook receiver on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.webhooks.receiver import Receiver


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    server = Receiver()
    await server.start()
    yield server
    await server.stop()
