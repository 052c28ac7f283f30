"""Webhooks: endpoints, the outbox, signed delivery, the log, resend, and receiver-side
verification (`verify_signature`, for integrators' receivers)."""

from pixgate.webhooks.receiver import verify_signature

__all__ = ["verify_signature"]
