"""The registered URLs a server's settings refuse, found at its start without DNS."""

from __future__ import annotations

import pytest

from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.service import reachability
from tests.helpers import make_account


@pytest.mark.parametrize(
    ("url", "allow_insecure", "refused_because"),
    [
        ("http://127.0.0.1:9/hook", False, "PIXGATE_ALLOW_INSECURE_WEBHOOKS=true"),
        ("https://127.0.0.1/hook", False, "loopback"),
        ("https://localhost/hook", False, "loopback"),
        ("https://10.0.0.7/hook", True, "private"),
        ("http://127.0.0.1:9/hook", True, None),
        ("https://localhost/hook", True, None),
        ("https://hooks.example.com/hook", False, None),  # names are resolved at delivery
    ],
)
def test_refusal(url: str, allow_insecure: bool, refused_because: str | None) -> None:
    reason = reachability.refusal(url, allow_insecure=allow_insecure)
    if refused_because is None:
        assert reason is None
    else:
        assert reason is not None and refused_because in reason


async def test_undeliverable_lists_what_these_settings_refuse(rt: Runtime) -> None:
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    first, second = await make_account(rt), await make_account(rt)
    local = await webhooks.add(
        rt, first.account_id, event_type="cash_in", url="http://127.0.0.1:9/hook"
    )
    await webhooks.add(
        rt, second.account_id, event_type="cash_out", url="https://93.184.215.14/hook"
    )
    gone = await webhooks.add(
        rt, second.account_id, event_type="cash_in", url="http://127.0.0.1:10/hook"
    )
    await webhooks.deactivate(rt, second.account_id, gone.endpoint.id)
    assert await reachability.undeliverable(rt) == []

    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": False})
    (refused,) = await reachability.undeliverable(rt)
    assert (refused.endpoint_id, refused.account_id) == (local.endpoint.id, first.account_id)
    assert refused.url == "http://127.0.0.1:9/hook"
    assert "PIXGATE_ALLOW_INSECURE_WEBHOOKS=true" in refused.reason
