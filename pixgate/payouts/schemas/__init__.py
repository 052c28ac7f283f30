"""Payouts: wire schemas: what the routes read and write."""
