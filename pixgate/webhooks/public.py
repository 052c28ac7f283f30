"""The public module of webhooks: what other features use of it, and the only module they
import."""

from pixgate.webhooks import service
from pixgate.webhooks.routes import RESEND_RATE
from pixgate.webhooks.rules import webhooks as webhook_rules
from pixgate.webhooks.rules.webhooks import EventType
from pixgate.webhooks.service import outbox
from pixgate.webhooks.service.events import DELIVERY_STATES

__all__ = ["DELIVERY_STATES", "RESEND_RATE", "EventType", "outbox", "service", "webhook_rules"]
