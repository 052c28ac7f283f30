"""Fixtures of the API tests: account A's world for the isolation sweep."""

from __future__ import annotations

import httpx
import pytest

from pixgate.runtime import Runtime
from tests.app.isolation_world import World, build_world
from tests.webhooks.receiver import Receiver


@pytest.fixture
async def world(rt: Runtime, client: httpx.AsyncClient, receiver: Receiver) -> World:
    return await build_world(rt, client, receiver)
