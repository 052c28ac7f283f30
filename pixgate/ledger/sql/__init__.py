"""Ledger: sql."""
