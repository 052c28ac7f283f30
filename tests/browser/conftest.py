"""The browser tests' webhook receiver is the webhook tests' fixture."""

from tests.webhooks.conftest import receiver

__all__ = ["receiver"]
