"""Webhooks: queries: named functions over a connection; they never commit."""
