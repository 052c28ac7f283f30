"""The nginx front each test module of tests/deploy/ runs, and the protocols it is spoken to in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.front import PROTOCOLS, Front, nginx_front
from tests.processes import serving


@pytest.fixture(scope="module")
def front(database_url: str) -> Iterator[Front]:
    with serving(database_url) as upstream, nginx_front(upstream) as running:
        yield running


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> str:
    """Each test that takes it runs over HTTP/1.1 and over HTTP/2 (which the file enables)."""
    return str(request.param)
