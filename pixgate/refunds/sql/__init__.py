"""Refunds: sql."""
