"""Charges: wire schemas: what the routes read and write."""
