"""Webhooks: pure rules: no I/O."""
