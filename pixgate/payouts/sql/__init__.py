"""Payouts: sql."""
